// A dedicated worker, or a shared one (`?shared`): tries evil.test over fetch and WebSocket.
const P = self.location.port;
const kind = self.location.search.includes('shared') ? 'shared' : 'worker';
fetch(`http://allowed.test:${P}/hit?k=ok-${kind}-fetch`).catch(() => {});
fetch(`http://evil.test:${P}/hit?k=${kind}-fetch`).catch(() => {});
try { new WebSocket(`ws://evil.test:${P}/ws?k=${kind}-ws`); } catch (e) {}
if (kind === 'shared') {
  self.onconnect = (e) => { e.ports[0].postMessage('shared ran'); };
} else {
  self.postMessage('worker ran');
}
