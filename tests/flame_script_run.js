// flame_script_run.js SVG - runs the script of a `nanoprof flame` SVG in
// node against a small DOM built from the SVG itself, plays clicks, mouse
// overs, a search and keys, and prints the state of the frames after each
// step, for test_flame_cli.sh to compare with what it expects.
'use strict';
const fs = require('fs');
const vm = require('vm');

const entities = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
function decode(s) {
    return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e) =>
        e[0] !== '#' ? entities[e] : String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : +e.slice(1)));
}

// The elements of the SVG, with the few DOM calls the script makes.
class Element {
    constructor(tag, attrs, parent) {
        this.tagName = tag;
        this.attrs = attrs;
        this.parentNode = parent;
        this.children = [];
        this.text = '';
        this.listeners = {};
    }
    getAttribute(name) { return name in this.attrs ? this.attrs[name] : null; }
    setAttribute(name, value) { this.attrs[name] = String(value); }
    get textContent() { return this.text + this.children.map((c) => c.textContent).join(''); }
    set textContent(v) { this.text = String(v); this.children = []; }
    getElementsByTagName(tag) {
        const out = [];
        const walk = (e) => e.children.forEach((c) => { if (c.tagName === tag) out.push(c); walk(c); });
        walk(this);
        return out;
    }
    addEventListener(type, fn) { this.listeners[type] = fn; }
    get ownerSVGElement() {
        let e = this.parentNode;
        while (e && e.tagName !== 'svg') e = e.parentNode;
        return e;
    }
}

function parse(xml) {
    const root = new Element('#document', {}, null);
    let cur = root, script = '';
    const re = /<\?[^]*?\?>|<!--[^]*?-->|<!\[CDATA\[([^]*?)\]\]>|<\/([^>]+)>|<([a-zA-Z]+)((?:\s+[^\s=]+="[^"]*")*)\s*(\/?)>|([^<]+)/g;
    let m;
    while ((m = re.exec(xml))) {
        if (m[1] !== undefined) {
            script += m[1];
        } else if (m[2]) {
            if (cur.tagName !== m[2]) throw new Error('</' + m[2] + '> closes <' + cur.tagName + '>');
            cur = cur.parentNode;
        } else if (m[3]) {
            const attrs = {};
            m[4].replace(/([^\s=]+)="([^"]*)"/g, (a, k, v) => { attrs[k] = decode(v); });
            const e = new Element(m[3], attrs, cur);
            cur.children.push(e);
            if (!m[5]) cur = e;
        } else if (m[6] !== undefined && cur !== root) {
            cur.text += decode(m[6]);
        }
    }
    return { root, script };
}

const { root, script } = parse(fs.readFileSync(process.argv[2], 'utf8'));
const svg = root.children[0];
const byId = (id) => {
    const find = (e) => {
        if (e.attrs.id === id) return e;
        for (const c of e.children) { const f = find(c); if (f) return f; }
        return null;
    };
    return find(root);
};
let answer = null;
const windowListeners = {};
const window = {
    prompt: () => answer,
    addEventListener: (type, fn) => { windowListeners[type] = fn; },
};
const document = { documentElement: svg, getElementById: byId };
vm.runInNewContext(script, { document, window, Array, String, Math, RegExp });

function frame(id) { return byId(id); }
function child(g, tag) { return g.getElementsByTagName(tag)[0]; }
// The frames (id class x width fill label) and the buttons' state: how
// many when loaded, then the frames that differ from what was loaded, and
// the hidden ones.
let loaded = null;
function dump(step) {
    const lines = [], hidden = [];
    for (const g of byId('frames').getElementsByTagName('g')) {
        const cls = g.getAttribute('class'), r = child(g, 'rect');
        const line = [g.attrs.id, cls, r.attrs.x, r.attrs.width, r.attrs.fill, child(g, 'text').textContent].join(' ');
        if (cls.includes('hide')) hidden.push(g.attrs.id);
        else if (!loaded || !loaded.includes(line)) lines.push(line);
    }
    if (!loaded) {
        loaded = lines.slice();
        lines.splice(0, lines.length, loaded.length + ' frames');
    }
    if (hidden.length) lines.push('hidden: ' + hidden.join(' '));
    console.log('# ' + step + '\n' + (lines.length ? lines.join('\n') : '(frames as loaded)'));
    console.log('unzoom=' + byId('unzoom').getAttribute('class') + ' search=' + byId('search').textContent +
        ' matched=' + byId('matched').textContent + ' details=' + byId('details').textContent);
}
const click = (el) => svg.listeners.click({ target: el });

dump('loaded');
svg.listeners.mouseover({ target: child(frame('f3'), 'rect') });
dump('mouse over f3');
svg.listeners.mouseout({ target: child(frame('f3'), 'rect') });
click(child(frame('f3'), 'text'));
dump('click f3');
click(child(frame('f0'), 'rect'));
dump('click f0');
click(child(frame('f6'), 'rect'));
dump('click f6');
click(child(frame('f1'), 'rect'));
dump('click f1 (an ancestor)');
click(byId('unzoom'));
dump('click unzoom');
click(child(frame('f8'), 'rect'));
dump('click f8');
answer = '^sample_(fib|leaf)$';
click(byId('search'));
dump('search ' + answer + ' (zoomed)');
click(byId('unzoom'));
dump('click unzoom (searching)');
windowListeners.keydown({ key: 'Escape', preventDefault() {} });
dump('escape');
let prevented = false;
answer = '[';
windowListeners.keydown({ key: 'f', ctrlKey: true, preventDefault() { prevented = true; } });
dump('ctrl-f ' + answer + (prevented ? ' (default prevented)' : ''));
