// Small behaviours of the book's pages (loaded on every page, after the theme).
(function () {
  // Search result snippets are cut from each page's HTML before MathJax has run, so
  // formulas would read as raw TeX; and the page's text includes its navigation. Keep
  // the article only, with every formula replaced by an ellipsis. Acts only where
  // Sphinx's searchtools (the `Search` object) is loaded.
  if (typeof Search !== "undefined" && typeof Search.htmlToText === "function") {
    const original = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      const article = doc.querySelector("article.bd-article");
      if (!article) return original(htmlString, anchor);
      for (const el of article.querySelectorAll(".math, nav, .headerlink, .toctree-wrapper")) {
        if (el.classList.contains("math")) el.replaceWith("…");
        else el.remove();
      }
      return original(`<div role="main">${article.innerHTML}</div>`, anchor);
    };
  }

  // Displayed formulas wider than the column: mark them, so that the CSS fades the
  // side with more to see (_css/book.css), until the reader scrolls to the end.
  function markScrolling() {
    for (const el of document.querySelectorAll('article.bd-article mjx-container[display="true"]')) {
      const scrolls = el.scrollWidth > el.clientWidth + 1;
      el.classList.toggle("lgc-scrolls", scrolls);
      const atEnd = el.scrollLeft + el.clientWidth >= el.scrollWidth - 1;
      el.classList.toggle("lgc-scrolled-end", scrolls && atEnd);
      if (scrolls && !el.dataset.lgcWatched) {
        el.dataset.lgcWatched = "1";
        el.addEventListener("scroll", markScrolling, {passive: true});
      }
    }
  }
  function whenTypeset() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(markScrolling);
    } else {
      markScrolling();
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", whenTypeset);
  } else {
    whenTypeset();
  }
  window.addEventListener("load", whenTypeset);
  window.addEventListener("resize", markScrolling);
})();
