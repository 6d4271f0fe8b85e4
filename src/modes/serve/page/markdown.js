// The opsai web chat, Markdown built as DOM nodes.
// Everything the model or a command wrote is hostile: it reaches the page only through textContent
// and createElement, never innerHTML, and links only as http(s).
'use strict';

window.OpsaiMarkdown = (() => {
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

  return { el, button, markdown };
})();
