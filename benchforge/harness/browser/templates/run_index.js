(function () {
  var KEYS = ["task", "agent", "model", "status"];
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.trial"));
  var count = document.getElementById("shown");
  function wanted() {
    var raw = location.hash.length > 1 ? location.hash.slice(1) : location.search.slice(1);
    var params = new URLSearchParams(raw);
    var want = {};
    KEYS.forEach(function (k) { want[k] = params.get(k) || ""; });
    return want;
  }
  function apply() {
    var want = wanted();
    KEYS.forEach(function (k) {
      var select = document.getElementById("f-" + k);
      if (select) { select.value = want[k]; }
    });
    var shown = 0;
    rows.forEach(function (row) {
      var ok = KEYS.every(function (k) { return !want[k] || row.dataset[k] === want[k]; });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    if (count) { count.textContent = shown + " of " + rows.length + " trials shown"; }
  }
  KEYS.forEach(function (k) {
    var select = document.getElementById("f-" + k);
    if (!select) { return; }
    select.addEventListener("change", function () {
      var params = new URLSearchParams();
      KEYS.forEach(function (key) {
        var s = document.getElementById("f-" + key);
        if (s && s.value) { params.set(key, s.value); }
      });
      history.replaceState(null, "", "#" + params.toString());
      apply();
    });
  });
  function toTrials() {
    var trials = document.getElementById("trials");
    if (trials) { trials.scrollIntoView(); }
  }
  window.addEventListener("hashchange", function () { apply(); toTrials(); });
  apply();
  var want = wanted();
  if (KEYS.some(function (k) { return want[k]; })) { toTrials(); }
})();
