// Timeline filters: each <select data-filters="LIST-ID"> shows only the list's items whose data-filter
// (the server's group for the event: progress, analysis, findings, actions, kube:<Kind>) matches; "kube"
// matches every Kubernetes Event. The list may be redrawn live: the choice is applied again each time.
(function () {
  "use strict";
  function matches(choice, value) {
    return choice === "all" || value === choice || (choice === "kube" && value.indexOf("kube:") === 0);
  }
  document.querySelectorAll("select[data-filters]").forEach(function (select) {
    var list = document.getElementById(select.getAttribute("data-filters"));
    if (!list) return;
    function apply() {
      Array.prototype.forEach.call(list.children, function (li) {
        var value = li.getAttribute("data-filter");
        if (value === null) return;  // "No events yet."
        li.hidden = !matches(select.value, value);
      });
    }
    select.addEventListener("change", apply);
    new MutationObserver(apply).observe(list, { childList: true });
    apply();
  });
})();
