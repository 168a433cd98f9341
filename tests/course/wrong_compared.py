"""Plausible wrong answers to the synthesis chapter's coding exercises (each must fail its check)."""

WRONG = {
    "ex-compared-offline": {
        "online instead of offline (uses the in-shadows)": '''
import numpy as np
from scipy.stats import norm

def offline_lira(S, inside, t):
    def fit(mask):
        counts = mask.sum(axis=0)
        mu = np.where(mask, S, 0.0).sum(axis=0) / counts
        sd = np.sqrt((np.where(mask, S - mu, 0.0) ** 2).sum() / (counts.sum() - counts.size))
        return mu, sd
    if (inside.sum(axis=0) == inside.shape[0]).any():
        raise ValueError("no out shadow")
    mu_in, sd_in = fit(inside)
    mu_out, sd_out = fit(~inside)
    return norm.logpdf(t, mu_in, sd_in) - norm.logpdf(t, mu_out, sd_out)
''',
        "per-candidate variance where the library pools": '''
import numpy as np

def offline_lira(S, inside, t):
    out = ~inside
    counts = out.sum(axis=0)
    if (counts == 0).any():
        raise ValueError("no out shadow")
    mu = np.where(out, S, 0.0).sum(axis=0) / counts
    sd = np.sqrt((np.where(out, S - mu, 0.0) ** 2).sum(axis=0) / (counts - 1))
    return (t - mu) / sd
''',
        "pooled variance divided by the count (no degree of freedom per mean)": '''
import numpy as np

def offline_lira(S, inside, t):
    out = ~inside
    counts = out.sum(axis=0)
    if (counts == 0).any():
        raise ValueError("no out shadow")
    mu = np.where(out, S, 0.0).sum(axis=0) / counts
    sd = np.sqrt((np.where(out, S - mu, 0.0) ** 2).sum() / counts.sum())
    return (t - mu) / sd
''',
        "variance around one global mean": '''
import numpy as np

def offline_lira(S, inside, t):
    out = ~inside
    counts = out.sum(axis=0)
    if (counts == 0).any():
        raise ValueError("no out shadow")
    mu = np.where(out, S, 0.0).sum(axis=0) / counts
    return (t - mu) / S[out].std(ddof=1)
''',
        "the mean over all shadows, in ones included": '''
import numpy as np

def offline_lira(S, inside, t):
    out = ~inside
    counts = out.sum(axis=0)
    if (counts == 0).any():
        raise ValueError("no out shadow")
    mu_out = np.where(out, S, 0.0).sum(axis=0) / counts
    sd = np.sqrt((np.where(out, S - mu_out, 0.0) ** 2).sum() / (counts.sum() - counts.size))
    return (t - S.mean(axis=0)) / sd
''',
        "average of the candidates' own variances": '''
import numpy as np

def offline_lira(S, inside, t):
    out = ~inside
    counts = out.sum(axis=0)
    if (counts == 0).any():
        raise ValueError("no out shadow")
    mu = np.where(out, S, 0.0).sum(axis=0) / counts
    with np.errstate(all="ignore"):
        own = (np.where(out, S - mu, 0.0) ** 2).sum(axis=0) / (counts - 1)
    return (t - mu) / np.sqrt(np.nanmean(own))
''',
        "a loop that handles one target only": '''
import numpy as np

def offline_lira(S, inside, t):
    out = ~inside
    counts = out.sum(axis=0)
    if (counts == 0).any():
        raise ValueError("no out shadow")
    mu = np.where(out, S, 0.0).sum(axis=0) / counts
    sd = np.sqrt((np.where(out, S - mu, 0.0) ** 2).sum() / (counts.sum() - counts.size))
    return np.array([(t[i] - mu[i]) / sd for i in range(len(t))])
''',
        "NaN instead of an error without out shadows": '''
import numpy as np

def offline_lira(S, inside, t):
    out = ~inside
    counts = out.sum(axis=0)
    mu = np.where(out, S, 0.0).sum(axis=0) / counts
    dev = np.where(out, S - np.nan_to_num(mu), 0.0)
    sd = np.sqrt((dev ** 2).sum() / (counts.sum() - (counts > 0).sum()))
    return (t - mu) / sd
''',
    },
    "ex-compared-auc": {
        "ties counted as 0": '''
import numpy as np

def auc(scores, is_member):
    members, others = scores[is_member], scores[~is_member]
    return float((members[:, None] > others[None, :]).mean())
''',
        "ties counted as 1": '''
import numpy as np

def auc(scores, is_member):
    members, others = scores[is_member], scores[~is_member]
    return float((members[:, None] >= others[None, :]).mean())
''',
        "ordinal ranks (ties broken by position)": '''
import numpy as np

def auc(scores, is_member):
    ranks = np.argsort(np.argsort(scores, kind="stable"), kind="stable") + 1
    m = is_member.sum()
    n = is_member.size - m
    return float((ranks[is_member].sum() - m * (m + 1) / 2) / (m * n))
''',
        "ranks from 0": '''
import numpy as np
from scipy.stats import rankdata

def auc(scores, is_member):
    ranks = rankdata(scores) - 1
    m = is_member.sum()
    n = is_member.size - m
    return float((ranks[is_member].sum() - m * (m + 1) / 2) / (m * n))
''',
        "members assumed to come first": '''
import numpy as np
from scipy.stats import rankdata

def auc(scores, is_member):
    m = int(is_member.sum())
    n = is_member.size - m
    ranks = rankdata(scores)
    return float((ranks[:m].sum() - m * (m + 1) / 2) / (m * n))
''',
        "non-members above members (1 - AUC)": '''
import numpy as np
from scipy.stats import rankdata

def auc(scores, is_member):
    m = int(is_member.sum())
    n = is_member.size - m
    ranks = rankdata(scores)
    return float((ranks[~is_member].sum() - n * (n + 1) / 2) / (m * n))
''',
    },
    "ex-compared-tpr": {
        "members tied with the threshold flagged (>=)": '''
import numpy as np

def tpr_at_fpr(scores, is_member, fpr):
    members, others = scores[is_member], scores[~is_member]
    allowed = int(np.floor(fpr * others.size + 1e-9))
    if allowed >= others.size:
        return 1.0
    tau = np.sort(others)[::-1][allowed]
    return float((members >= tau).mean())
''',
        "threshold at the k-th largest non-member (off by one)": '''
import numpy as np

def tpr_at_fpr(scores, is_member, fpr):
    members, others = scores[is_member], scores[~is_member]
    allowed = int(np.floor(fpr * others.size + 1e-9))
    if allowed == 0:
        return float((members > others.max()).mean())
    tau = np.sort(others)[::-1][allowed - 1]
    return float((members > tau).mean())
''',
        "floor without tolerance": '''
import numpy as np

def tpr_at_fpr(scores, is_member, fpr):
    members, others = scores[is_member], scores[~is_member]
    allowed = int(np.floor(fpr * others.size))
    if allowed >= others.size:
        return 1.0
    tau = np.sort(others)[::-1][allowed]
    return float((members > tau).mean())
''',
        "ceil: more false positives than allowed": '''
import numpy as np

def tpr_at_fpr(scores, is_member, fpr):
    members, others = scores[is_member], scores[~is_member]
    allowed = int(np.ceil(fpr * others.size - 1e-9))
    if allowed >= others.size:
        return 1.0
    tau = np.sort(others)[::-1][allowed]
    return float((members > tau).mean())
''',
        "interpolated quantile of the non-members": '''
import numpy as np

def tpr_at_fpr(scores, is_member, fpr):
    members, others = scores[is_member], scores[~is_member]
    return float((members > np.quantile(others, 1 - fpr)).mean())
''',
        "forgets that every non-member may be flagged at FPR 1": '''
import numpy as np

def tpr_at_fpr(scores, is_member, fpr):
    members, others = scores[is_member], scores[~is_member]
    allowed = min(int(np.floor(fpr * others.size + 1e-9)), others.size - 1)
    tau = np.sort(others)[::-1][allowed]
    return float((members > tau).mean())
''',
    },
}
