// Keyboard and click handling for the annotation screens. Everything is delegated from
// the document, so it keeps working after htmx swaps in the next fable.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function screen() { return document.getElementById("screen"); }
  function typing(el) {
    return el && (el.tagName === "INPUT" && el.type === "text" || el.tagName === "TEXTAREA" ||
                  el.tagName === "SELECT" || el.isContentEditable);
  }

  // ---- MCQA: first pick = primary, more picks = equally valid, a pick again = removed.
  function mcqaOrder(form) {
    var value = form.querySelector("input[name=order]").value;
    return value ? value.split(",") : [];
  }
  function mcqaRender(form, order) {
    form.querySelector("input[name=order]").value = order.join(",");
    form.querySelectorAll(".option").forEach(function (el) {
      var label = el.dataset.label, at = order.indexOf(label);
      el.classList.toggle("primary-choice", at === 0);
      el.classList.toggle("also-choice", at > 0);
      el.setAttribute("aria-pressed", at >= 0 ? "true" : "false");
      el.querySelector(".state").textContent =
        at === 0 ? "Your choice" : at > 0 ? "Equally valid" : "";
      el.querySelector("input[type=radio]").checked = at === 0;
      el.querySelector("input[type=checkbox]").checked = at > 0;
    });
    var summary = form.querySelector("[data-role=summary]");
    if (summary) {
      summary.textContent = order.length === 0 ? "Nothing chosen yet." :
        order.length === 1 ? "Your choice: " + order[0] + "." :
        "Your choice: " + order[0] + "; equally valid: " + order.slice(1).join(", ") + ".";
    }
  }
  function mcqaToggle(form, label) {
    if (!form.querySelector('.option[data-label="' + label + '"]')) { return; }
    var order = mcqaOrder(form), at = order.indexOf(label);
    if (at >= 0) { order.splice(at, 1); } else { order.push(label); }
    mcqaRender(form, order);
  }

  // ---- Rating: a score 1-5 per moral; with data-one-per-screen, one moral at a time.
  function ratingRows() {
    return Array.prototype.slice.call(document.querySelectorAll("#screen .moral"));
  }
  function ratingShow(index) {
    var s = screen(), rows = ratingRows();
    if (!rows.length) { return; }
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (s.hasAttribute("data-one-per-screen")) {
      rows.forEach(function (row, i) { row.hidden = i !== index; });
    }
    rows[index].focus();
  }
  function ratingFocusMove(delta) {
    var rows = ratingRows();
    var current = rows.indexOf(document.activeElement && document.activeElement.closest(".moral"));
    ratingShow(current + delta);
  }
  function ratingFirstUnscored() {
    var rows = ratingRows();
    var index = rows.findIndex(function (row) { return !row.querySelector("input:checked"); });
    return index < 0 ? rows.length - 1 : index;
  }

  function init() {
    var s = screen();
    if (!s) { return; }
    var form = s.querySelector("#answer-form");
    if (form && s.dataset.screen === "mcqa") { mcqaRender(form, mcqaOrder(form)); }
    if (s.dataset.screen === "rating") {
      ratingShow(ratingFirstUnscored());
    } else {
      var h = s.querySelector("h1");
      if (h) { h.focus({ preventScroll: false }); }
    }
  }

  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:afterSwap", init);

  document.addEventListener("click", function (event) {
    var action = event.target.closest("[data-action]");
    if (action && action.dataset.action === "shortcuts") {
      document.getElementById("shortcuts").showModal();
      return;
    }
    if (action && action.dataset.action === "skip") { openSkip(); return; }
    var option = event.target.closest("#screen[data-screen=mcqa] .option");
    if (option && !event.target.closest("input, label")) {
      mcqaToggle(option.closest("form"), option.dataset.label);
    }
  });

  function openSkip() {
    var box = document.getElementById("skip-box");
    if (!box) { return; }
    box.open = true;
    box.querySelector("input[name=comment]").focus();
  }

  // Forms marked data-swap-screen post with htmx and swap in the next screen. The listener
  // is delegated, so a form is never posted natively in the moment before htmx would have
  // processed freshly swapped content. Without JavaScript they are plain form posts.
  var busy = false;
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id === "answer-form" && screen() && screen().dataset.screen === "mcqa" &&
        mcqaOrder(form).length === 0) {
      event.preventDefault();
      var hint = form.querySelector("[data-role=summary]");
      hint.textContent = "Choose a moral first (press its letter).";
      hint.classList.add("error-text");
      return;
    }
    if (!form.hasAttribute("data-swap-screen") || !window.htmx) { return; }
    event.preventDefault();
    if (busy) { return; }  // a double Enter must not post twice
    busy = true;
    window.htmx.ajax("POST", form.action, { source: form, target: "#screen", swap: "outerHTML" })
      .finally(function () { busy = false; });
  }, true);

  document.addEventListener("keydown", function (event) {
    var s = screen();
    if (!s || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var dialog = document.getElementById("shortcuts");
    if (dialog && dialog.open) { return; }
    if (typing(event.target)) { return; }
    var key = event.key;
    var form = s.querySelector("#answer-form");
    if (key === "?") { event.preventDefault(); dialog && dialog.showModal(); return; }
    if (key === "s" || key === "S") { event.preventDefault(); openSkip(); return; }
    if (!form) { return; }
    if (key === "Enter") {
      if (event.target.tagName === "BUTTON" || event.target.tagName === "A" ||
          event.target.tagName === "SUMMARY") { return; }
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (s.dataset.screen === "mcqa") {
      var label = null;
      if (/^[a-jA-J]$/.test(key)) { label = key.toUpperCase(); }
      else if (/^[1-9]$/.test(key)) { label = String.fromCharCode(64 + Number(key)); }
      if (label) { event.preventDefault(); mcqaToggle(form, label); }
      return;
    }
    if (s.dataset.screen === "rating") {
      if (key === "ArrowDown") { event.preventDefault(); ratingFocusMove(1); return; }
      if (key === "ArrowUp") { event.preventDefault(); ratingFocusMove(-1); return; }
      if (/^[1-5]$/.test(key)) {
        var row = document.activeElement && document.activeElement.closest(".moral");
        if (!row) { row = s.querySelector(".moral"); }
        var input = row && row.querySelector('input[type=radio][value="' + key + '"]');
        if (input) {
          event.preventDefault();
          input.checked = true;
          row.classList.add("scored");
          var rows = ratingRows();
          if (rows.indexOf(row) < rows.length - 1) { ratingFocusMove(1); }
        }
      }
    }
  });
})();
