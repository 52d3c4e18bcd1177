(function () {
  var root = document.getElementById(WIDGET_ID);
  var data = JSON.parse(root.querySelector("script.lgc-frames").textContent);
  var controls = root.querySelectorAll(".lgc-control");
  var image = root.querySelector("img.lgc-frame");
  var readout = root.querySelector(".lgc-readout");
  function key() {
    return Array.prototype.map.call(controls, function (c) { return c.value; }).join(",");
  }
  function show() {
    var frame = data.frames[key()];
    image.src = data.images[frame.image];
    image.alt = data.alt + " (" + frame.label + ")";
    readout.textContent = frame.readout;
    Array.prototype.forEach.call(controls, function (c, i) {
      var value = root.querySelector('.lgc-value[data-control="' + i + '"]');
      if (value) value.textContent = data.labels[i][c.value];
      if (c.type === "range") c.setAttribute("aria-valuetext", data.labels[i][c.value]);
    });
    root.setAttribute("data-frame", key());
  }
  function setAll(indices) {
    Array.prototype.forEach.call(controls, function (c, i) { c.value = indices[i]; });
    show();
  }
  Array.prototype.forEach.call(controls, function (control) {
    control.addEventListener("input", show);
  });
  Array.prototype.forEach.call(root.querySelectorAll(".lgc-preset"), function (button) {
    button.addEventListener("click", function () {
      setAll(button.getAttribute("data-key").split(","));
    });
  });
})();
