// "Screening: 20 fables, everyone": a random sample of 20, every annotator, overlap = all.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    if (!event.target.matches("[data-preset=screening]")) { return; }
    var form = document.getElementById("batch-form");
    form.querySelector("[name=name]").value = form.querySelector("[name=name]").value || "Screening";
    form.querySelector("[name=selection][value=sample]").checked = true;
    form.querySelector("[name=sample]").value = 20;
    if (!form.querySelector("[name=seed]").value) { form.querySelector("[name=seed]").value = 1; }
    form.querySelectorAll("[name=annotators]").forEach(function (box) { box.checked = true; });
    form.querySelector("[name=screening]").checked = true;
  });
})();
