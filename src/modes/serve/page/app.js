// The opsai web chat. Everything the model or a command wrote is hostile: it reaches the page only
// through textContent and createElement, never innerHTML, and links only as http(s).
'use strict';

// ---------- rendering: Markdown, turns, tool calls, approvals ----------
window.OpsaiRender = (() => {
  const MAX_DEPTH = 6;
  const LIST_RE = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const FENCE_RE = /^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
  // One cell of a table's separator row (`:---:`); whole rows are split on `|` first, so the check
  // stays linear on a hostile line (a single regex over the row backtracks quadratically on spaces).
  const TABLE_SEP_CELL_RE = /^:?-+:?$/;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function button(text, cls, onClick) {
    const b = el('button', cls, text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }

  // ----- inline Markdown -----
  function safeUrl(href) {
    try {
      const url = new URL(href, window.location.href);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
    } catch (_) { return null; }
  }

  function closing(text, from, mark) {
    for (let j = text.indexOf(mark, from); j >= 0; j = text.indexOf(mark, j + 1)) {
      if (j === from) continue;
      if (mark.length === 1 && text[j + 1] === mark) { j += 1; continue; }
      // snake_case and __dunder__ words are not emphasis.
      if (mark[0] === '_' && /\w/.test(text[j + mark.length] || '')) continue;
      if (text[j - 1] !== ' ') return j;
    }
    return -1;
  }

  // Bounded link parts, matched in place (sticky): a hostile line full of `[` stays linear.
  const LINK_RE = /\[([^\]]{0,500})\]\(\s*<?([^)\s>]{1,2000})>?(?:\s+"[^"]{0,500}")?\s*\)/y;

  function inline(text, parent, depth = 0) {
    // A mark with no closer after some position has none after any later one either: remembering
    // that keeps a line of unmatched `**` or backticks linear instead of quadratic.
    const unclosed = new Set();
    let buf = '';
    const flush = () => { if (buf) { parent.append(document.createTextNode(buf)); buf = ''; } };
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === '\\' && i + 1 < text.length && /[\\`*_[\]()#+\-.!|>~]/.test(text[i + 1])) {
        buf += text[i + 1]; i += 2; continue;
      }
      if (c === '`') {
        let n = 1;
        while (text[i + n] === '`') n += 1;
        const fence = '`'.repeat(n);
        const end = unclosed.has(fence) ? -1 : text.indexOf(fence, i + n);
        if (end > 0) {
          flush();
          parent.append(el('code', null, text.slice(i + n, end)));
          i = end + n; continue;
        }
        unclosed.add(fence);
        buf += fence; i += n; continue;
      }
      if ((c === '*' || c === '_') && depth < MAX_DEPTH) {
        const mark = text[i + 1] === c ? c + c : c;
        const wordInside = c === '_' && i > 0 && /\w/.test(text[i - 1]);
        const start = i + mark.length;
        const end = wordInside || text[start] === ' ' || unclosed.has(mark) ? -1 : closing(text, start, mark);
        if (end < 0 && !wordInside && text[start] !== ' ') unclosed.add(mark);
        if (end > start) {
          flush();
          const e = el(mark.length === 2 ? 'strong' : 'em');
          inline(text.slice(start, end), e, depth + 1);
          parent.append(e);
          i = end + mark.length; continue;
        }
      }
      if (c === '[') {
        LINK_RE.lastIndex = i;
        const m = LINK_RE.exec(text);
        if (m) {
          flush();
          const href = safeUrl(m[2]);
          if (href) {
            const a = el('a', null, m[1] || href);
            a.href = href; a.rel = 'noopener noreferrer'; a.target = '_blank';
            parent.append(a);
          } else {
            parent.append(document.createTextNode(m[0]));
          }
          i += m[0].length; continue;
        }
      }
      buf += c; i += 1;
    }
    flush();
  }

  function inlineLines(lines, parent) {
    lines.forEach((line, n) => {
      if (n > 0) parent.append(el('br'));
      inline(line, parent);
    });
  }

  // ----- block Markdown -----
  function copyText(text, btn) {
    const done = (ok) => {
      btn.textContent = ok ? 'Copied' : 'Copy failed';
      setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => done(true), () => done(false));
      return;
    }
    const area = el('textarea', 'offscreen');
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
    area.remove();
    btn.focus();
    done(ok);
  }

  function codeBlock(code, lang) {
    const wrap = el('div', 'code-block');
    const bar = el('div', 'code-bar');
    const copy = button('Copy', 'copy', () => copyText(code, copy));
    copy.setAttribute('aria-label', 'Copy the code block');
    bar.append(el('span', 'code-lang', lang || 'code'), copy);
    const pre = el('pre');
    pre.append(el('code', null, code));
    wrap.append(bar, pre);
    return wrap;
  }

  function isTableStart(lines, i) {
    return lines[i].includes('|') && i + 1 < lines.length && lines[i + 1].includes('-')
      && isTableSeparator(lines[i + 1]);
  }
  function isTableSeparator(line) {
    const row = cells(line);
    return row.length > 0 && row.every((cell) => TABLE_SEP_CELL_RE.test(cell));
  }
  function cells(line) {
    let s = line.trim();
    if (s.startsWith('|')) s = s.slice(1);
    if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
    return s.split(/(?<!\\)\|/).map((c) => c.trim());
  }
  function table(lines, i, target) {
    const wrap = el('div', 'table-wrap');
    const t = el('table');
    const head = el('thead');
    const hr = el('tr');
    const names = cells(lines[i]);
    for (const name of names) { const th = el('th'); inline(name, th); hr.append(th); }
    head.append(hr);
    const body = el('tbody');
    i += 2;
    while (i < lines.length && lines[i].includes('|') && lines[i].trim()) {
      const tr = el('tr');
      const row = cells(lines[i]);
      for (let n = 0; n < names.length; n += 1) { const td = el('td'); inline(row[n] || '', td); tr.append(td); }
      body.append(tr);
      i += 1;
    }
    t.append(head, body);
    wrap.append(t);
    target.append(wrap);
    return i;
  }

  function startsBlock(lines, i) {
    const l = lines[i];
    return FENCE_RE.test(l) || /^\s{0,3}#{1,6}\s/.test(l) || /^\s{0,3}>/.test(l) || LIST_RE.test(l)
      || isTableStart(lines, i);
  }

  function list(lines, i, target, depth) {
    const first = LIST_RE.exec(lines[i]);
    const base = first[1].length;
    const ordered = /\d/.test(first[2]);
    const listEl = el(ordered ? 'ol' : 'ul');
    if (ordered && parseInt(first[2], 10) !== 1) listEl.start = parseInt(first[2], 10);
    while (i < lines.length) {
      const m = LIST_RE.exec(lines[i]);
      if (!m || m[1].length < base || /\d/.test(m[2]) !== ordered) break;
      const li = el('li');
      const text = [m[3]];
      const sub = [];
      i += 1;
      while (i < lines.length) {
        const l = lines[i];
        if (!l.trim()) {
          if (i + 1 < lines.length && (LIST_RE.test(lines[i + 1]) || /^\s{2,}\S/.test(lines[i + 1]))) { i += 1; continue; }
          break;
        }
        const mm = LIST_RE.exec(l);
        if (mm && mm[1].length <= base) break;
        if (mm || sub.length || FENCE_RE.test(l)) { sub.push(l); i += 1; continue; }
        if (!/^\s/.test(l) && startsBlock(lines, i)) break;
        text.push(l.trim()); i += 1;
      }
      inlineLines(text, li);
      if (sub.length) {
        const cut = Math.min(...sub.filter((s) => s.trim()).map((s) => s.length - s.trimStart().length));
        markdown(sub.map((s) => s.slice(cut)).join('\n'), li, depth + 1);
      }
      listEl.append(li);
    }
    target.append(listEl);
    return i;
  }

  function markdown(src, target, depth = 0) {
    const lines = String(src || '').replace(/\r\n?/g, '\n').split('\n');
    if (depth > MAX_DEPTH) { target.append(el('p', 'plain', lines.join('\n'))); return target; }
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (!line.trim()) { i += 1; continue; }
      if ((m = FENCE_RE.exec(line))) {
        const fence = m[1];
        const body = [];
        i += 1;
        while (i < lines.length && !lines[i].trimStart().startsWith(fence)) { body.push(lines[i]); i += 1; }
        i += 1;
        target.append(codeBlock(body.join('\n'), m[2]));
      } else if ((m = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
        // The page owns h1 and h2; the model's headings start at h3.
        const h = el(`h${Math.min(6, m[1].length + 2)}`, 'md-heading');
        inline(m[2], h);
        target.append(h);
        i += 1;
      } else if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
        target.append(el('hr'));
        i += 1;
      } else if (isTableStart(lines, i)) {
        i = table(lines, i, target);
      } else if (/^\s{0,3}>/.test(line)) {
        const body = [];
        while (i < lines.length && /^\s{0,3}>/.test(lines[i])) { body.push(lines[i].replace(/^\s{0,3}> ?/, '')); i += 1; }
        target.append(markdown(body.join('\n'), el('blockquote'), depth + 1));
      } else if (LIST_RE.test(line)) {
        i = list(lines, i, target, depth);
      } else {
        const para = [line.trim()];
        i += 1;
        while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) { para.push(lines[i].trim()); i += 1; }
        const p = el('p');
        inlineLines(para, p);
        target.append(p);
      }
    }
    return target;
  }

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
    const d = el('details', 'tool');
    d.dataset.callId = call.id || '';
    const summary = el('summary');
    const badge = el('span');
    setRisk(badge, call.risk);
    const what = command || Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
    const status = el('span', 'tool-status');
    summary.append(badge, el('span', 'tool-name', call.tool || 'tool'), el('code', 'tool-what', what), status);
    const body = el('div', 'tool-body');
    const dl = el('dl', 'tool-meta');
    row(dl, 'Command', command, 'mono');
    row(dl, 'Cluster', cluster);
    row(dl, 'Namespace', namespace);
    if (Array.isArray(call.reasons) && call.reasons.length) row(dl, 'Why this risk', call.reasons.join('; '));
    body.append(dl);
    const argsText = JSON.stringify(args, null, 2);
    if (argsText && argsText !== '{}') {
      const a = el('details', 'tool-args');
      a.append(el('summary', null, 'Arguments'), el('pre', 'mono', argsText));
      body.append(a);
    }
    const approval = el('div', 'approval-slot');
    const outLabel = el('div', 'out-label', 'Output');
    const out = el('pre', 'tool-output mono');
    outLabel.hidden = true; out.hidden = true;
    body.append(approval, outLabel, out);
    d.append(summary, body);
    container.append(d);
    return { d, badge, status, out, outLabel, approval };
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
      box.append(el('p', 'needs-operator', 'This needs an operator: only an operator can approve it here. '
        + 'Nobody answering refuses it.'));
      rec.approval.replaceChildren(box);
      return;
    }
    const buttons = [];
    const send = async (decision, confirm) => {
      buttons.forEach((b) => { b.disabled = true; });
      msg.textContent = 'Sending…';
      try {
        // The request's own command, byte for byte: the server checks the answer is for it.
        await opts.approve(ev.id, decision, confirm, ev.command);
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
            rec.approval.replaceChildren(el('p', 'decision', 'Nobody answered in time: refused.'));
            rec.d.classList.remove('waiting');
            rec.status.textContent = 'refused (no answer)';
          } else {
            rec.approval.replaceChildren();
            rec.d.classList.remove('waiting');
            rec.status.textContent = DECISIONS[ev.decision] || ev.decision || '';
            if (ev.decision !== 'auto') rec.approval.append(el('p', 'decision', `Decision: ${rec.status.textContent}`));
          }
        } else if (ev.type === 'tool_result') {
          const rec = tool({ id: ev.id, tool: 'tool' });
          if (kind === 'output') appendOutput(rec, ev.chunk || '');
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

  return { el, button, markdown, user, turn, stored };
})();

// ---------- the app: login, conversations, streaming turns ----------
(() => {
  const $ = (id) => document.getElementById(id);
  const { el, button } = window.OpsaiRender;
  const state = {
    me: null, csrf: '', mode: null, convs: [], current: null, running: false, abort: null, turn: null,
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

  function showLogin(mode) {
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
    show('main');
    await loadList();
    const wanted = Number((location.hash.match(/^#c=(\d+)$/) || [])[1]);
    if (wanted && state.convs.some((c) => c.id === wanted)) await select(wanted);
    else newConversation();
    $('input').focus();
  }

  // ---------- conversation list ----------
  async function loadList() {
    try {
      state.convs = await apiJson('GET', '/api/v2/ai/conversations');
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
      if (c.running) meta.push('running');
      open.append(el('span', 'conv-title', c.title || 'Untitled'), el('span', 'conv-meta', meta.join(' · ')));
      const del = button('Delete', 'conv-delete', () => remove(c));
      del.dataset.id = String(c.id);
      del.setAttribute('aria-label', `Delete conversation: ${c.title || 'Untitled'}`);
      li.append(open, del);
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
  }

  function newConversation() {
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
    stopReading();
    setRunning(false);
    state.current = id;
    history.replaceState(null, '', `#c=${id}`);
    const conv = state.convs.find((c) => c.id === id);
    setHeader(conv);
    renderList();
    const log = $('log');
    log.replaceChildren(el('p', 'hint', 'Loading…'));
    let msgs;
    try {
      msgs = await apiJson('GET', `/api/v2/ai/conversations/${id}/messages`);
    } catch (e) { report(e); log.replaceChildren(); return; }
    if (state.current !== id) return;
    log.replaceChildren();
    const running = Boolean(attachRunning && conv && conv.running);
    window.OpsaiRender.stored(log, msgs, conv || {}, running);
    scrollDown();
    if (running) attach(id); // runs until the turn ends; errors show in the turn
  }

  // ---------- turns ----------
  function setRunning(on) {
    state.running = on;
    $('stop').hidden = !on;
    $('stop').disabled = false;
    $('send').disabled = on;
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
    if (!text || state.running) return;
    banner('');
    if (state.current === null) {
      const body = {};
      if ($('cluster').value) body.cluster_id = $('cluster').value;
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
      approve: (callId, decision, confirm, command) => decide(id, callId, decision, confirm, command),
      conv: state.convs.find((c) => c.id === id),
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
    if (state.current === id) {
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
  async function decide(conversationId, callId, decision, confirm, command) {
    const body = { decision, conversation_id: conversationId };
    if (confirm !== undefined) body.confirm = confirm;
    if (typeof command === 'string') body.command = command;
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
