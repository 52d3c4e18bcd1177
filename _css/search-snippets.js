// Search result snippets are cut from each page's HTML before MathJax has run, so
// its formulas read as raw TeX ("\(\rho \min_i c_i\)"). Replace every formula by an
// ellipsis before Sphinx's searchtools takes the text. Loaded on every page; it acts
// only where searchtools' `Search` object exists.
(function () {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const original = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const formula = /<(span|div) class="math[^"]*">[\s\S]*?<\/\1>/g;
    return original(htmlString.replace(formula, "<span>…</span>"), anchor);
  };
})();
