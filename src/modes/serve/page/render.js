// The opsai web chat, a turn's messages, tool calls and approvals.
// Everything the model or a command wrote is hostile: it reaches the page only through textContent
// and createElement, never innerHTML, and links only as http(s).
'use strict';

window.OpsaiRender = (() => {
  const { el, button, markdown } = window.OpsaiMarkdown;

  // ----- messages, tool calls, approvals -----
  const RISKS = { safe: 'Safe', medium: 'Medium risk', high: 'High risk' };
  const KUBE_TOOLS = /^(kube|list_pods|get_pod_logs|describe_pod|get_deployment_status|get_events|get_configmap|get_node_status)$/;
  const STATUS = {
    ran: 'ran', denied_by_policy: 'refused by policy', denied_by_user: 'denied',
    invalid_arguments: 'invalid arguments', timed_out: 'timed out', interrupted: 'interrupted',
  };
  const DECISIONS = {
    auto: 'runs without asking', approved: 'approved', approved_for_session: 'approved for this session',
    denied: 'denied', refused: 'refused', dry_run: 'dry run', abort: 'aborted',
  };

  function user(log, text) {
    const m = el('div', 'msg user');
    m.append(el('span', 'sr', 'You: '), el('div', 'user-text', text));
    log.append(m);
  }

  function parseArgs(args) {
    if (typeof args !== 'string') return args || {};
    try { return JSON.parse(args); } catch (_) { return { raw: args }; }
  }

  function setRisk(badge, risk) {
    const name = RISKS[risk] ? risk : null;
    badge.className = name ? `badge risk-${name}` : 'badge';
    badge.textContent = name ? RISKS[name] : '';
    badge.hidden = !name;
  }

  function row(dl, name, value, cls) {
    if (value === undefined || value === null || value === '') return null;
    const dd = el('dd', cls, value);
    dl.append(el('dt', null, name), dd);
    return dd;
  }

  // One tool call as a collapsible block: risk badge, what it ran, where, its output and result.
  function toolBlock(container, call, conv) {
    const args = parseArgs(call.args !== undefined ? call.args : call.params);
    const command = call.command || (typeof args.command === 'string' ? args.command : '');
    const kube = KUBE_TOOLS.test(call.tool || '');
    const cluster = call.cluster || (kube ? (conv && conv.cluster_id) || 'default' : '');
    const namespace = call.namespace || (kube && typeof args.namespace === 'string' ? args.namespace : '');
    // A command of a conversation on a host set runs on every host of it.
    const hosts = call.hosts || (call.tool === 'run_command' && conv && conv.hosts ? conv.hosts : '');
    const d = el('details', 'tool');
    d.dataset.callId = call.id || '';
    const summary = el('summary');
    const badge = el('span');
    setRisk(badge, call.risk);
    const what = command || Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
    const status = el('span', 'tool-status');
    const whatEl = el('code', 'tool-what', what);
    summary.append(badge, el('span', 'tool-name', call.tool || 'tool'), whatEl, status);
    const body = el('div', 'tool-body');
    const dl = el('dl', 'tool-meta');
    // What an approval box shows again: hidden while it is open, so each is on the page once.
    const repeated = [whatEl];
    const commandRow = row(dl, 'Command', command, 'mono');
    row(dl, 'Cluster', cluster);
    row(dl, 'Namespace', namespace);
    row(dl, 'Runs on', hosts);
    const reasonsRow = Array.isArray(call.reasons) && call.reasons.length ? row(dl, 'Why this risk', call.reasons.join('; ')) : null;
    for (const dd of [commandRow, reasonsRow]) if (dd) repeated.push(dd, dd.previousElementSibling);
    body.append(dl);
    const argsText = JSON.stringify(args, null, 2);
    if (argsText && argsText !== '{}') {
      const a = el('details', 'tool-args');
      a.append(el('summary', null, 'Arguments'), el('pre', 'mono', argsText));
      body.append(a);
    }
    const approval = el('div', 'approval-slot');
    // One line per host of a fleet command, as each ends.
    const hostList = el('ul', 'host-results mono');
    hostList.hidden = true;
    body.append(hostList);
    const outLabel = el('div', 'out-label', 'Output');
    const out = el('pre', 'tool-output mono');
    outLabel.hidden = true; out.hidden = true;
    body.append(approval, outLabel, out);
    d.append(summary, body);
    container.append(d);
    return { d, badge, status, out, outLabel, approval, repeated, hostList };
  }

  // The command and its reasons are on the page once: in the approval box while it asks, in the
  // tool block otherwise.
  function asking(rec, open) {
    for (const e of rec.repeated || []) e.hidden = open;
  }

  function showOutput(rec, text, label) {
    rec.outLabel.textContent = label;
    rec.outLabel.hidden = false;
    rec.out.hidden = false;
    rec.out.textContent = text;
  }

  // Live output grows by text nodes: resetting the whole text per chunk would be quadratic.
  function appendOutput(rec, text) {
    if (rec.out.hidden) showOutput(rec, '', 'Output (live)');
    rec.out.append(document.createTextNode(text));
  }

  function hostResult(rec, ev) {
    const exit = ev.exit_code !== undefined && ev.exit_code !== null ? ` · exit ${ev.exit_code}` : '';
    const li = el('li', ev.outcome === 'ran' && !ev.exit_code ? 'host ok' : 'host failed', `${ev.host}: ${ev.outcome}${exit}`);
    rec.hostList.append(li);
    rec.hostList.hidden = false;
  }

  function result(rec, ev) {
    const st = STATUS[ev.status] || ev.status || 'done';
    const exit = ev.exit_code !== undefined && ev.exit_code !== null ? ` · exit ${ev.exit_code}` : '';
    rec.status.textContent = `${st}${exit}`;
    rec.d.classList.add(ev.status === 'ran' && !ev.exit_code ? 'ok' : 'failed');
    const text = ev.content !== undefined ? ev.content : ev.output;
    showOutput(rec, text || '(no output)', 'Result');
  }

  function approvalBox(rec, ev, opts) {
    rec.d.open = true;
    rec.d.classList.add('waiting');
    setRisk(rec.badge, ev.risk);
    rec.status.textContent = 'waiting for approval';
    asking(rec, true);
    const box = el('div', ev.risk === 'high' ? 'approval high' : 'approval');
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'Approval request');
    box.append(el('p', 'approval-title', `Approval needed: ${RISKS[ev.risk] || ev.risk || 'unknown risk'}`));
    if (ev.command) box.append(el('pre', 'mono', ev.command));
    const dl = el('dl', 'tool-meta');
    if (Array.isArray(ev.reasons) && ev.reasons.length) row(dl, 'Why this risk', ev.reasons.join('; '));
    row(dl, 'Runs on', ev.host);
    row(dl, 'Why run it', ev.why);
    row(dl, 'Detail', ev.detail, 'mono pre');
    box.append(dl);
    const msg = el('p', 'approval-msg');
    msg.setAttribute('role', 'status');
    if (opts.role !== 'operator') {
      const within = ev.timeout_s ? ` within ${ev.timeout_s} s` : '';
      box.append(el('p', 'needs-operator', 'Waiting for an operator: this needs an operator, who sees this request '
        + `and can approve or deny it. Nobody answering${within} refuses it.`));
      rec.approval.replaceChildren(box);
      return;
    }
    const buttons = [];
    const send = async (decision, confirm) => {
      buttons.forEach((b) => { b.disabled = true; });
      msg.textContent = 'Sending…';
      try {
        // The request's own command, byte for byte: the server checks the answer is for it.
        await opts.approve(ev.id, decision, confirm, ev.command, ev.request_id);
        msg.textContent = decision === 'deny' ? 'Denied.' : 'Approved; waiting for the command.';
      } catch (e) {
        msg.textContent = e.message;
        msg.classList.add('error');
        buttons.forEach((b) => { b.disabled = false; });
        if (confirmInput) approve.disabled = confirmInput.value.trim() !== ev.confirm_word;
      }
    };
    let confirmInput = null;
    const approve = button('Approve', 'approve', () => send('approve', confirmInput ? confirmInput.value.trim() : undefined));
    buttons.push(approve);
    if (ev.confirm_word) {
      const id = `confirm-${String(ev.id).replace(/[^\w-]/g, '_')}`;
      const label = el('label', 'confirm-label', `High risk: type ${ev.confirm_word} to allow it`);
      label.htmlFor = id;
      confirmInput = el('input', 'confirm-input');
      confirmInput.id = id;
      confirmInput.autocomplete = 'off';
      approve.disabled = true;
      confirmInput.addEventListener('input', () => { approve.disabled = confirmInput.value.trim() !== ev.confirm_word; });
      confirmInput.addEventListener('keydown', (k) => {
        if (k.key === 'Enter') { k.preventDefault(); if (!approve.disabled) approve.click(); }
      });
      box.append(label, confirmInput);
      buttons.push(confirmInput);
    }
    const row2 = el('div', 'approval-buttons');
    row2.append(approve);
    // As on the terminal: only a Medium command with a grant (what it would cover) offers it.
    if (ev.risk === 'medium' && ev.grant && !ev.confirm_word) {
      const session = button(`Approve for session: ${ev.grant}`, 'approve-session', () => send('approve_session'));
      buttons.push(session);
      row2.append(session);
    }
    const deny = button('Deny', 'deny danger', () => send('deny'));
    buttons.push(deny);
    row2.append(deny);
    box.append(row2, msg);
    if (ev.timeout_s) box.append(el('p', 'hint', `Refused automatically after ${ev.timeout_s} s without an answer.`));
    rec.approval.replaceChildren(box);
  }

  function newTurn(log, opts) {
    const root = el('div', 'msg assistant');
    root.append(el('span', 'sr', 'opsai: '));
    log.append(root);
    const tools = new Map();
    let draft = '';
    let draftEl = null;
    let pending = false;
    const paint = () => {
      pending = false;
      if (!draftEl) return;
      const follow = opts.atBottom();
      draftEl.replaceChildren();
      markdown(draft, draftEl);
      if (follow) opts.toBottom();
    };
    const dropDraft = () => { if (draftEl) draftEl.remove(); draftEl = null; const text = draft; draft = ''; return text; };
    const thought = (text) => {
      if (!text || !text.trim()) return;
      const d = el('details', 'thought');
      d.append(el('summary', null, 'Thought'), markdown(text, el('div', 'thought-body')));
      root.append(d);
    };
    const answer = (text) => root.append(markdown(text, el('div', 'answer')));
    const tool = (call) => {
      let rec = tools.get(call.id);
      if (!rec) { rec = toolBlock(root, call, opts.conv); tools.set(call.id, rec); }
      return rec;
    };
    const text = (ev) => (ev.content !== undefined ? ev.content : ev.text) || '';
    const notice = (cls, msg) => {
      const p = el('p', cls, msg);
      if (cls === 'error') p.setAttribute('role', 'alert');
      root.append(p);
    };
    const api = {
      root, tools, thought, answer, tool, notice,
      handle(ev) {
        const follow = opts.atBottom();
        const kind = ev.kind || ev.type;
        if (ev.type === 'text') {
          if (kind === 'start') return;
          if (kind === 'answer_delta') {
            draft += text(ev);
            if (!draftEl) { draftEl = el('div', 'answer provisional'); root.append(draftEl); }
            // Repaint at most every 50 ms: a reply can come in hundreds of small pieces.
            if (!pending) { pending = true; window.setTimeout(paint, 50); }
          } else if (kind === 'thought') { dropDraft(); thought(text(ev)); } else { dropDraft(); answer(text(ev)); }
        } else if (ev.type === 'tool_call') {
          thought(dropDraft());
          const rec = tool(ev);
          rec.d.open = true;
          rec.status.textContent = 'running…';
        } else if (ev.type === 'approval') {
          const rec = tool({ id: ev.id, tool: 'command', command: ev.command, risk: ev.risk });
          if (kind === 'request') approvalBox(rec, ev, opts);
          else if (kind === 'timeout') {
            asking(rec, false);
            rec.approval.replaceChildren(el('p', 'decision', 'Nobody answered in time: refused.'));
            rec.d.classList.remove('waiting');
            rec.status.textContent = 'refused (no answer)';
          } else if (kind === 'decided_by') {
            // An operator answered this user's request: the decision that follows names them.
            rec.decidedBy = ev.decided_by;
          } else {
            asking(rec, false);
            rec.approval.replaceChildren();
            rec.d.classList.remove('waiting');
            const by = rec.decidedBy ? ` by ${rec.decidedBy}` : '';
            // An earlier "Approve for session" let it run: say which.
            rec.status.textContent = ev.grant ? `approved by your earlier "Approve for session: ${ev.grant}"`
              : `${DECISIONS[ev.decision] || ev.decision || ''}${by}`;
            if (ev.decision !== 'auto') rec.approval.append(el('p', 'decision', `Decision: ${rec.status.textContent}`));
          }
        } else if (ev.type === 'tool_result') {
          const rec = tool({ id: ev.id, tool: 'tool' });
          if (kind === 'output') appendOutput(rec, ev.chunk || '');
          else if (kind === 'host_result') hostResult(rec, ev);
          else if (kind === 'output_truncated') {
            const mib = ev.limit_bytes ? ` after ${Math.round(ev.limit_bytes / 1048576)} MiB` : '';
            appendOutput(rec, `\n… live output cut${mib}; the result follows when the command ends.\n`);
          } else result(rec, ev);
        } else if (ev.type === 'error') {
          if (ev.recoverable || kind === 'retry') {
            const why = ev.content || ev.reason || 'the model endpoint failed';
            notice('retry', `Retrying (${ev.attempt || '?'}/${ev.max_attempts || '?'}): ${why}`);
          } else notice('error', `Error: ${text(ev) || ev.message || 'the turn failed'}`);
        } else if (ev.type === 'done') {
          const left = dropDraft();
          if (left.trim()) answer(left);
        }
        if (follow) opts.toBottom();
      },
      error(msg) { const follow = opts.atBottom(); notice('error', msg); if (follow) opts.toBottom(); },
      finish() {
        const left = dropDraft();
        if (left.trim()) answer(left);
        for (const rec of tools.values()) rec.approval.querySelectorAll('button, input').forEach((b) => { b.disabled = true; });
      },
    };
    return api;
  }

  function turn(log, opts) {
    return newTurn(log, opts);
  }

  // The operators' queue: each request of another user that waits, as an approval box, kept (with
  // what is typed in it) while it waits and removed once answered elsewhere or ended.
  function syncQueue(list, entries, opts) {
    const keep = new Set();
    for (const ev of entries) {
      // A fleet's "the rest?" asks again under the same call id: the request id tells them apart.
      const key = ev.request_id || `${ev.conversation_id}/${ev.id}`;
      keep.add(key);
      if ([...list.children].some((li) => li.dataset.key === key)) continue;
      const li = el('li', 'queue-item');
      li.dataset.key = key;
      li.append(el('p', 'queue-who', `${ev.asked_by} asks, in their conversation ${ev.conversation_id}`));
      if (opts.open) li.append(button('Open the conversation', 'link queue-open', () => opts.open(ev.conversation_id)));
      const rec = toolBlock(li, { id: ev.id, tool: 'command', command: ev.command, risk: ev.risk }, null);
      // A grant is for the giver's own turns: another user's request is approved once.
      const approve = (callId, decision, confirm, command, requestId) =>
        opts.approve(ev.conversation_id, callId, decision, confirm, command, requestId);
      approvalBox(rec, { ...ev, grant: null }, { role: 'operator', approve });
      list.append(li);
    }
    for (const li of [...list.children]) if (!keep.has(li.dataset.key)) li.remove();
  }

  // The stored conversation; for a running one only up to its last question (the stream replays the rest).
  function stored(log, msgs, conv, running) {
    let list = Array.isArray(msgs) ? msgs : [];
    if (running) {
      const last = list.map((m) => m.role).lastIndexOf('user');
      if (last >= 0) list = list.slice(0, last + 1);
    }
    const opts = { role: 'viewer', approve: null, atBottom: () => false, toBottom: () => {}, conv };
    let t = null;
    for (const m of list) {
      if (m.role === 'user') { user(log, m.content || ''); t = null; continue; }
      if (m.role === 'system') continue;
      if (!t) t = newTurn(log, opts);
      if (m.role === 'assistant') {
        if (Array.isArray(m.tool_calls) && m.tool_calls.length) {
          t.thought(m.content || '');
          for (const call of m.tool_calls) {
            t.tool({ id: call.id, tool: call.name, args: call.arguments, risk: call.risk });
          }
        } else if (m.content) t.answer(m.content);
      } else if (m.role === 'tool') {
        const rec = t.tools.get(m.tool_call_id);
        if (rec) {
          showOutput(rec, m.content || '(no output)', 'Result');
          // The observation's first line is its header (`exit 0 · 12 ms`, `refused: …`).
          rec.status.textContent = (m.content || '').split('\n')[0].slice(0, 80);
        } else t.notice('hint', m.content || '');
      }
    }
  }

  return { el, button, markdown, user, turn, stored, syncQueue };
})();
