// Injected into a copy of every page the browser test opens: once MathJax has typeset the page, open every
// folded block (solutions, hidden cells) and report what does not fit the content column as a reader at
// 1,400 px sees it: a display equation or a table wider than the column, and a table cell cut with an ellipsis.
// The report is written to <body data-layout-report="..."> so that `chromium --dump-dom` carries it out.
(function () {
  const TOLERANCE = 2; // px: sub-pixel rounding of borders

  function unfold() {
    document.querySelectorAll("details").forEach((d) => { d.open = true; });
    document.querySelectorAll(".toggle-hidden").forEach((el) => el.classList.remove("toggle-hidden"));
    document.querySelectorAll(".dropdown, .cell").forEach((el) => {
      if (getComputedStyle(el).display === "none") el.style.display = "block";
    });
  }

  function place(el) {
    const section = el.closest("section[id]");
    return section ? section.id : "";
  }

  function snippet(el, n) {
    return (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, n);
  }

  function report() {
    unfold();
    const column = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
    const box = column.getBoundingClientRect();
    const style = getComputedStyle(column);
    const left = box.left + parseFloat(style.paddingLeft);
    const right = box.right - parseFloat(style.paddingRight);
    const problems = [];

    column.querySelectorAll('mjx-container[display="true"]').forEach((el) => {
      const r = (el.querySelector("mjx-math") || el).getBoundingClientRect();
      if (r.width === 0) return;
      if (r.left < left - TOLERANCE || r.right > right + TOLERANCE) {
        const label = el.closest(".math") ? el.closest(".math").id || "" : "";
        problems.push({ kind: "equation", section: place(el), label: label, width: Math.round(r.width),
                        overflow_left: Math.round(left - r.left), overflow_right: Math.round(r.right - right) });
      }
    });
    column.querySelectorAll("table").forEach((table) => {
      const r = table.getBoundingClientRect();
      if (r.width === 0) return;
      if (r.width > right - left + TOLERANCE) {
        const head = table.querySelector("tr");
        problems.push({ kind: "table", section: place(table), width: Math.round(r.width),
                        header: head ? snippet(head, 160) : "" });
      }
    });
    column.querySelectorAll("td, th").forEach((cell) => {
      const text = (cell.textContent || "").trim();
      if (text.endsWith("…") || text.endsWith("...")) {
        problems.push({ kind: "ellipsis", section: place(cell), text: text.slice(-100) });
      }
    });
    document.body.setAttribute("data-layout-report",
                               JSON.stringify({ column: Math.round(right - left), problems: problems }));
  }

  window.addEventListener("load", () => {
    const typeset = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    (typeset || Promise.resolve()).then(() => setTimeout(report, 0), () => setTimeout(report, 0));
  });
})();
