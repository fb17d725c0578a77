'use strict';
// Registered before the page's code runs, so a syntax or runtime error
// anywhere below is shown and counted instead of leaving a blank panel.
window.syspgoErrors = [];
window.syspgoError = function (msg) {
  window.syspgoErrors.push(String(msg));
  const box = document.getElementById('js-errors');
  box.hidden = false;
  const line = document.createElement('div');
  line.textContent = 'Report error: ' + msg;
  box.appendChild(line);
  const st = document.getElementById('report-status');
  st.dataset.state = 'error';
  st.dataset.errors = String(window.syspgoErrors.length);
};
window.addEventListener('error', e => window.syspgoError(e.message + (e.lineno ? ' (line ' + e.lineno + ')' : '')));
window.addEventListener('unhandledrejection', e => window.syspgoError(String(e.reason)));
