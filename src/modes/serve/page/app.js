// The opsai web chat, login, conversations, streaming turns.
// Everything the model or a command wrote is hostile: it reaches the page only through textContent
// and createElement, never innerHTML, and links only as http(s).
'use strict';

// ---------- the app: login, conversations, streaming turns ----------
(() => {
  const $ = (id) => document.getElementById(id);
  const { el, button } = window.OpsaiRender;
  const state = {
    me: null, csrf: '', mode: null, convs: [], nextPage: null, current: null, running: false, abort: null, turn: null,
    stopAsked: false,
  };

  // ---------- API ----------
  class ApiError extends Error {
    constructor(status, message, data, retryAfter) {
      super(message);
      this.status = status; this.data = data; this.retryAfter = retryAfter;
    }
  }

  async function api(method, path, body, opts = {}) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    // The session cookie alone never authorises a change: the server wants this header too.
    if (method !== 'GET' && method !== 'HEAD' && state.csrf) headers['X-CSRF-Token'] = state.csrf;
    let resp;
    try {
      resp = await fetch(path, {
        method, headers, credentials: 'same-origin', signal: opts.signal,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new ApiError(0, `Cannot reach opsai serve (${e.message}). Check that it still runs, then try again.`);
    }
    if (!resp.ok) {
      let data = null;
      let msg = `The server answered ${resp.status} ${resp.statusText}.`;
      try { data = await resp.json(); if (data && data.error) msg = data.error; } catch (_) { /* not JSON */ }
      const err = new ApiError(resp.status, msg, data, resp.headers.get('Retry-After'));
      if (resp.status === 401 && !opts.quiet401) loggedOut();
      throw err;
    }
    return resp;
  }
  async function apiJson(method, path, body) {
    const resp = await api(method, path, body);
    return resp.status === 204 ? null : resp.json();
  }

  function banner(msg) {
    const b = $('banner');
    b.replaceChildren(el('span', null, msg), button('Dismiss', 'link', () => { b.hidden = true; }));
    b.hidden = !msg;
  }
  function report(e) {
    if (e && e.name === 'AbortError') return;
    banner(e && e.message ? e.message : String(e));
  }

  // ---------- views and login ----------
  function show(view) {
    for (const v of ['loading', 'login', 'token', 'main']) $(`${v}-view`).hidden = v !== view;
  }

  async function boot() {
    try {
      const me = await (await api('GET', '/api/v2/auth/me', undefined, { quiet401: true })).json();
      await enter(me);
    } catch (e) {
      if (e.status === 401) showLogin(e.data && e.data.mode);
      else { show('loading'); report(e); }
    }
  }

  // Single sign-on, when the server offers it: a link to the identity provider on either view.
  async function offerSso() {
    let enabled = false;
    try { enabled = Boolean((await apiJson('GET', '/api/v2/auth/sso')).enabled); } catch (_) { /* not offered */ }
    $('sso-login').hidden = !enabled;
    $('sso-token').hidden = !enabled;
  }

  function showLogin(mode) {
    offerSso();
    state.me = null; state.csrf = ''; state.mode = mode || state.mode;
    $('who').textContent = '';
    $('logout').hidden = true;
    if (state.mode === 'token') { show('token'); return; }
    $('login-token-hint').hidden = state.mode === 'users';
    show('login');
    $('login-user').focus();
  }

  function loggedOut() {
    stopReading();
    setRunning(false);
    showLogin(state.mode);
  }

  async function login(ev) {
    ev.preventDefault();
    const err = $('login-error');
    const submit = $('login-submit');
    err.textContent = '';
    submit.disabled = true;
    try {
      await api('POST', '/api/v2/auth/login',
        { username: $('login-user').value, password: $('login-pass').value }, { quiet401: true });
      $('login-pass').value = '';
      await boot();
    } catch (e) {
      $('login-pass').value = '';
      if (e.status === 429) {
        err.textContent = `Too many failed logins. Try again in ${e.retryAfter || 60} seconds.`;
      } else if (e.status === 401) {
        err.textContent = e.message || 'Wrong user name or password.';
      } else {
        err.textContent = e.message;
      }
      $('login-pass').focus();
    } finally {
      submit.disabled = false;
    }
  }

  async function logout() {
    try { await api('POST', '/api/v2/auth/logout'); } catch (e) { report(e); }
    loggedOut();
  }

  async function enter(me) {
    state.me = me; state.csrf = me.csrf_token || ''; state.mode = me.mode;
    $('who').textContent = `${me.user} · ${me.role}`;
    $('logout').hidden = me.mode !== 'users';
    const picker = $('cluster');
    picker.replaceChildren();
    const clusters = Array.isArray(me.clusters) ? me.clusters : [];
    if (clusters.length === 0) picker.append(new Option('default (kubectl current context)', ''));
    for (const c of clusters) picker.append(new Option(c, c));
    // Host sets (`opsai serve --hosts`): only shown when the server offers some.
    const hosts = $('hosts');
    hosts.replaceChildren(new Option('this server', ''));
    state.hostSets = Array.isArray(me.host_sets) ? me.host_sets : [];
    for (const s of state.hostSets) hosts.append(new Option(`${s.pattern} (${s.label})`, s.pattern));
    hosts.hidden = state.hostSets.length === 0;
    $('hosts-label').hidden = hosts.hidden;
    show('main');
    // Any operator (a password user, single sign-on, or the token's owner) answers others' requests.
    if (me.role === 'operator' && !state.queueTimer) {
      state.queueTimer = window.setInterval(pollQueue, QUEUE_POLL_MS);
      pollQueue();
    }
    await loadList();
    const wanted = Number((location.hash.match(/^#c=(\d+)$/) || [])[1]);
    if (wanted && state.convs.some((c) => c.id === wanted)) await select(wanted);
    else newConversation();
    $('input').focus();
  }

  // ---------- the operators' queue: other users' requests waiting for an operator ----------
  const QUEUE_POLL_MS = 3000;
  async function pollQueue() {
    if (!state.me || state.me.role !== 'operator') return;
    let entries;
    try { entries = await apiJson('GET', '/api/v2/ai/approvals'); } catch (_) { return; }
    const others = (Array.isArray(entries) ? entries : []).filter((e) => e.asked_by !== state.me.user);
    $('queue').hidden = others.length === 0;
    window.OpsaiRender.syncQueue($('queue-list'), others, { approve: decide, open: openOther });
  }

  // ---------- conversation list ----------
  // The list comes a page at a time: the server names the next page in a `Link: <…>; rel="next"`.
  function nextPage(resp) {
    const link = resp.headers.get('Link') || '';
    const found = link.match(/<([^>]+)>\s*;\s*rel="next"/);
    return found && found[1].startsWith('/api/v2/ai/conversations?') ? found[1] : null;
  }

  async function loadList() {
    try {
      const resp = await api('GET', '/api/v2/ai/conversations');
      state.convs = await resp.json();
      state.nextPage = nextPage(resp);
    } catch (e) { report(e); return; }
    renderList();
  }

  async function loadOlder() {
    if (!state.nextPage) return;
    try {
      const resp = await api('GET', state.nextPage);
      const known = new Set(state.convs.map((c) => c.id));
      state.convs.push(...(await resp.json()).filter((c) => !known.has(c.id)));
      state.nextPage = nextPage(resp);
    } catch (e) { report(e); return; }
    renderList();
  }

  function when(secs) {
    if (!secs) return '';
    const d = new Date(secs * 1000);
    const today = new Date().toDateString() === d.toDateString();
    return today ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString();
  }

  function renderList() {
    const list = $('conv-list');
    // Rebuilding the list must not drop the keyboard's place in it.
    const focused = list.contains(document.activeElement) ? document.activeElement : null;
    const refocus = focused && `.${focused.classList[0]}[data-id="${focused.dataset.id}"]`;
    list.replaceChildren();
    $('conv-empty').hidden = state.convs.length > 0;
    for (const c of state.convs) {
      const li = el('li', c.id === state.current ? 'conv active' : 'conv');
      const open = button('', 'conv-open', () => select(c.id));
      open.dataset.id = String(c.id);
      if (c.id === state.current) open.setAttribute('aria-current', 'true');
      const count = `${c.message_count} message${c.message_count === 1 ? '' : 's'}`;
      const meta = [c.cluster_id || 'default', count, when(c.updated_at)];
      if (c.hosts) meta.splice(1, 0, `on ${c.hosts}`);
      if (c.running) meta.push('running');
      open.append(el('span', 'conv-title', c.title || 'Untitled'), el('span', 'conv-meta', meta.join(' · ')));
      const del = button('Delete', 'conv-delete', () => remove(c));
      del.dataset.id = String(c.id);
      del.setAttribute('aria-label', `Delete conversation: ${c.title || 'Untitled'}`);
      li.append(open, del);
      list.append(li);
    }
    if (state.nextPage) {
      const older = button('Show older conversations', 'conv-older', () => loadOlder());
      older.dataset.id = 'older';
      const li = el('li', 'conv');
      li.append(older);
      list.append(li);
    }
    const again = refocus && list.querySelector(refocus);
    if (again) again.focus();
    else if (focused) $('new-conv').focus();
  }

  async function remove(c) {
    // A plain confirm: keyboard and screen-reader friendly, and nothing is lost by a stray click.
    if (!window.confirm(`Delete the conversation "${c.title || 'Untitled'}"? This cannot be undone.`)) return;
    try {
      await api('DELETE', `/api/v2/ai/conversations/${c.id}`);
      if (state.current === c.id) newConversation();
      await loadList();
    } catch (e) { report(e); }
  }

  function setHeader(conv) {
    $('chat-title').textContent = conv ? (conv.title || 'Untitled') : 'New conversation';
    const cluster = conv ? (conv.cluster_id || 'default') : ($('cluster').value || 'default');
    $('chat-cluster').textContent = `cluster: ${cluster}`;
    // Where run_command runs: the server, or every host of the conversation's set.
    const pattern = conv ? conv.hosts || '' : $('hosts').value;
    const set = (state.hostSets || []).find((s) => s.pattern === pattern);
    $('chat-hosts').textContent = pattern ? `commands run on: ${pattern}${set ? ` (${set.label})` : ''}` : 'commands run on: this server';
  }

  // Another user's conversation is read-only: nothing can be sent in it.
  function setReadOnly(on) {
    state.readOnly = on;
    const input = $('input');
    if (!input.dataset.placeholder) input.dataset.placeholder = input.placeholder;
    input.disabled = on;
    input.placeholder = on ? "Another user's conversation: read-only" : input.dataset.placeholder;
    $('send').disabled = on || state.running;
  }

  // An operator reads another user's conversation: what is stored and, while it runs, its turn
  // live (a request waiting in it can be answered here too).
  async function openOther(id) {
    let conv;
    try { conv = await apiJson('GET', `/api/v2/ai/conversations/${id}`); } catch (e) { report(e); return; }
    stopReading();
    setRunning(false);
    state.current = id;
    history.replaceState(null, '', `#c=${id}`);
    setHeader(conv);
    $('chat-title').textContent = `${conv.title || 'Untitled'} (${conv.user_id}'s, read-only)`;
    setReadOnly(true);
    state.other = conv;
    renderList();
    await showStored(id, conv, Boolean(conv.running));
  }

  // A conversation's stored messages in the log and, when `running`, its turn live after them.
  async function showStored(id, conv, running) {
    const log = $('log');
    log.replaceChildren(el('p', 'hint', 'Loading…'));
    let msgs;
    try {
      msgs = await apiJson('GET', `/api/v2/ai/conversations/${id}/messages`);
    } catch (e) { report(e); log.replaceChildren(); return; }
    if (state.current !== id) return;
    log.replaceChildren();
    window.OpsaiRender.stored(log, msgs, conv || {}, running);
    scrollDown();
    if (running) attach(id); // runs until the turn ends; errors show in the turn
  }

  function newConversation() {
    setReadOnly(false);
    stopReading();
    setRunning(false);
    state.current = null;
    if (location.hash) history.replaceState(null, '', location.pathname);
    $('log').replaceChildren(el('p', 'hint', 'Ask a question to start a conversation on the chosen cluster.'));
    setHeader(null);
    renderList();
  }

  // `attachRunning` false: show the stored messages only (the turn the list called running ended).
  async function select(id, attachRunning = true) {
    setReadOnly(false);
    stopReading();
    setRunning(false);
    state.current = id;
    history.replaceState(null, '', `#c=${id}`);
    const conv = state.convs.find((c) => c.id === id);
    setHeader(conv);
    renderList();
    await showStored(id, conv, Boolean(attachRunning && conv && conv.running));
  }

  // ---------- turns ----------
  function setRunning(on) {
    state.running = on;
    $('stop').hidden = !on;
    $('stop').disabled = false;
    $('send').disabled = on || Boolean(state.readOnly);
    $('log').setAttribute('aria-busy', on ? 'true' : 'false');
  }

  function stopReading() {
    if (state.abort) state.abort.abort();
    state.abort = null;
    state.turn = null;
  }

  // Follow the stream only while the reader is at the bottom: scrolling up to read stays put.
  function atBottom() {
    const log = $('log');
    return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  }
  function scrollDown() {
    const log = $('log');
    log.scrollTop = log.scrollHeight;
  }

  async function send(ev) {
    ev.preventDefault();
    const input = $('input');
    const text = input.value.trim();
    if (!text || state.running || state.readOnly) return;
    banner('');
    if (state.current === null) {
      const body = {};
      if ($('cluster').value) body.cluster_id = $('cluster').value;
      if ($('hosts').value) body.hosts = $('hosts').value;
      let conv;
      try { conv = await apiJson('POST', '/api/v2/ai/conversations', body); } catch (e) { report(e); return; }
      state.convs.unshift(conv);
      state.current = conv.id;
      history.replaceState(null, '', `#c=${conv.id}`);
      $('log').replaceChildren();
      if (!conv.title) conv.title = text.slice(0, 80);
      setHeader(conv);
      renderList();
    }
    const id = state.current;
    input.value = '';
    window.OpsaiRender.user($('log'), text);
    scrollDown();
    const accepted = await stream(id, 'POST', '/api/v2/ai/chat', { conversation_id: id, message: text });
    // Refused (busy, logged out, unreachable): keep the question to send again.
    if (!accepted && !input.value) input.value = text;
  }

  async function attach(id) {
    await stream(id, 'GET', `/api/v2/ai/conversations/${id}/stream`);
  }

  async function stream(id, method, path, body) {
    stopReading();
    const abort = new AbortController();
    state.abort = abort;
    const turn = window.OpsaiRender.turn($('log'), {
      role: state.me.role, atBottom, toBottom: () => scrollDown(),
      approve: (callId, decision, confirm, command, requestId) => decide(id, callId, decision, confirm, command, requestId),
      conv: state.convs.find((c) => c.id === id) || (state.other && state.other.id === id ? state.other : undefined),
    });
    state.turn = turn;
    state.stopAsked = false;
    setRunning(true);
    let done = false;
    // Stopped here or elsewhere (another tab's Stop, a delete, the server shutting down).
    let stopped = false;
    let seen = 0;
    let accepted = false;
    try {
      const resp = await api(method, path, body, { signal: abort.signal });
      accepted = true;
      await readSse(resp, abort.signal, (event) => {
        if (event.type === 'done') { done = true; stopped = event.outcome === 'stopped'; }
        else if (event.kind !== 'start') seen += 1;
        // The question is stored and the turn runs: the list can say so.
        else if (method === 'POST') loadList();
        turn.handle(event);
      });
      if (!done) turn.error('The connection closed before the turn finished. Select the conversation again to see how it ended.');
    } catch (e) {
      if (e.name === 'AbortError') return accepted;
      turn.error(e.message);
    } finally {
      turn.finish();
      if (state.turn === turn && (state.stopAsked || stopped)) turn.notice('stopped', 'Stopped. What came before is kept.');
      if (state.turn === turn) { setRunning(false); state.turn = null; state.abort = null; }
    }
    if (state.current === id && !state.readOnly) {
      await loadList();
      const conv = state.convs.find((c) => c.id === id);
      if (conv) setHeader(conv);
      // Attached to a turn that had already ended: its messages are stored, show them.
      if (method === 'GET' && done && seen === 0 && state.abort === null) await select(id, false);
    }
    return accepted;
  }

  // Server-sent events over fetch: EventSource cannot POST a body.
  async function readSse(resp, signal, onEvent) {
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      if (signal.aborted) { reader.cancel().catch(() => {}); return; }
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let m;
      while ((m = /\r?\n\r?\n/.exec(buf))) {
        const block = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, '')).join('\n');
        if (!data) continue; // a keep-alive comment
        let event;
        try { event = JSON.parse(data); } catch (_) { continue; }
        onEvent(event);
      }
    }
  }

  // Call ids are the model's: the conversation (and the command) say which waiting call this answers.
  async function decide(conversationId, callId, decision, confirm, command, requestId) {
    const body = { decision, conversation_id: conversationId };
    if (confirm !== undefined) body.confirm = confirm;
    if (typeof command === 'string') body.command = command;
    if (typeof requestId === 'string') body.request_id = requestId;
    await api('POST', `/api/v2/ai/approvals/${encodeURIComponent(callId)}`, body);
  }

  async function stop() {
    if (state.current === null) return;
    $('stop').disabled = true;
    state.stopAsked = true;
    try { await api('POST', `/api/v2/ai/conversations/${state.current}/stop`); } catch (e) { report(e); $('stop').disabled = false; }
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('login-form').addEventListener('submit', login);
    $('logout').addEventListener('click', logout);
    $('new-form').addEventListener('submit', (ev) => { ev.preventDefault(); newConversation(); $('input').focus(); });
    $('cluster').addEventListener('change', () => { if (state.current === null) setHeader(null); });
    $('hosts').addEventListener('change', () => { if (state.current === null) setHeader(null); });
    $('composer').addEventListener('submit', send);
    $('stop').addEventListener('click', stop);
    $('input').addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing && !ev.altKey && !ev.ctrlKey && !ev.metaKey) {
        ev.preventDefault();
        $('composer').requestSubmit();
      }
    });
    boot();
  });
})();
