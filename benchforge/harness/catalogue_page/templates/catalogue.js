const filter = document.getElementById('filter');
const rows = Array.from(document.querySelectorAll('#tasks tbody tr'));
const shown = document.getElementById('shown');
function applyFilter() {
  const q = filter.value.trim().toLowerCase();
  let n = 0;
  for (const row of rows) {
    const hit = !q || row.textContent.toLowerCase().includes(q);
    row.hidden = !hit;
    n += hit ? 1 : 0;
  }
  shown.textContent = n;
}
filter.addEventListener('input', () => {
  applyFilter();
  history.replaceState(null, '', '#' + encodeURIComponent(filter.value.trim()));
});
if (location.hash.length > 1) {
  filter.value = decodeURIComponent(location.hash.slice(1));
  applyFilter();
}
document.querySelectorAll('#tasks th').forEach((th, i) => th.addEventListener('click', () => {
  const asc = th.dataset.dir !== 'asc';
  document.querySelectorAll('#tasks th').forEach(h => delete h.dataset.dir);
  th.dataset.dir = asc ? 'asc' : 'desc';
  const body = document.querySelector('#tasks tbody');
  const value = r => r.cells[i].dataset.v || '';
  const sorted = Array.from(body.rows).sort((a, b) => {
    const x = value(a), y = value(b), nx = parseFloat(x), ny = parseFloat(y);
    const c = !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
    return asc ? c : -c;
  });
  sorted.forEach(r => body.appendChild(r));
}));
document.body.dataset.ready = '1';
