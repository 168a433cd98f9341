"""What federated protocols reveal by design: reconstruction attacks for the book's privacy sections."""

from fedlib.privacy._trilateration import align, reconstruct_from_anchor_distances

__all__ = ["align", "reconstruct_from_anchor_distances"]
