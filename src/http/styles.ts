/** The one stylesheet of the web pages: system fonts, light and dark, a grid that folds to one column on a phone. */
export const STYLES = `
:root{--bg:#f5f6f8;--card:#fff;--ink:#1c2430;--muted:#667085;--line:#e4e7ec;--accent:#3559e0;
--ok:#12805c;--ok-bg:#e3f5ed;--warn:#a15c00;--warn-bg:#fdf1dc;--bad:#b42318;--bad-bg:#fde8e6;--info:#3559e0;--info-bg:#e7ecfd;
--in:#3559e0;--out:#12a37a;--turn:#e08a00;font-synthesis:none}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--card:#171d24;--ink:#e6e9ee;--muted:#98a2b3;--line:#27303b;--accent:#7c97ff;
--ok:#4ccf9a;--ok-bg:#12362a;--warn:#f5b54a;--warn-bg:#3a2a0d;--bad:#ff7a6b;--bad-bg:#3d1713;--info:#9db0ff;--info-bg:#1c2547;
--in:#7c97ff;--out:#4ccf9a;--turn:#f5b54a}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
main,.top{max-width:1240px;margin:0 auto;padding:0 16px}
.narrow main,.narrow .top{max-width:780px}
.top{display:flex;align-items:center;gap:12px;padding-top:18px;padding-bottom:6px;flex-wrap:wrap}
.brand{font-weight:700;font-size:20px;letter-spacing:-.01em;margin:0;display:flex;align-items:center;gap:8px}
.brand .mark{width:22px;height:22px;border-radius:6px;background:linear-gradient(135deg,var(--accent),var(--out));display:inline-block}
.meta{color:var(--muted);font-size:13px;display:flex;gap:14px;flex-wrap:wrap}
.conn{margin-left:auto;font-size:12px;color:var(--muted);display:flex;align-items:center;gap:6px}
.conn::before{content:"";width:8px;height:8px;border-radius:50%;background:var(--muted)}
.conn.live::before{background:var(--ok)}
.conn.lost::before{background:var(--bad)}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:0 0 10px;font-weight:600}
h3{font-size:16px;margin:0;display:flex;align-items:center;gap:8px;justify-content:space-between}
.pill{display:inline-block;border-radius:999px;padding:2px 10px;font-size:12px;font-weight:600;white-space:nowrap}
.s-ready{background:var(--ok-bg);color:var(--ok)}
.s-degraded,.s-starting{background:var(--warn-bg);color:var(--warn)}
.s-failed,.s-unconfigured{background:var(--bad-bg);color:var(--bad)}
.s-setup_required{background:var(--info-bg);color:var(--info)}
.s-disabled{background:var(--line);color:var(--muted)}
.status{display:flex;align-items:center;gap:12px;margin:10px 0 14px;flex-wrap:wrap}
.status .big{font-size:15px;padding:5px 14px}
.status p{margin:0;color:var(--muted)}
.grid{display:grid;gap:14px;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));margin-bottom:14px;align-items:start}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:14px 16px;min-width:0}
.wide{grid-column:1/-1}
section{margin:18px 0}
dl{display:grid;grid-template-columns:auto 1fr;gap:4px 12px;margin:10px 0 0;font-size:14px}
dt{color:var(--muted)}
dd{margin:0;text-align:right;overflow-wrap:anywhere}
.why{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--warn);border-radius:12px;padding:12px 16px;margin-bottom:14px}
.why.setup_required{border-left-color:var(--info)}
.why ul{margin:0;padding:0;list-style:none}
.why li{padding:8px 0;border-top:1px solid var(--line)}
.why li:first-child{border-top:0}
.why .fix{color:var(--muted);font-size:13px;margin-top:2px}
code{font:13px/1.3 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);border:1px solid var(--line);border-radius:5px;padding:1px 5px;overflow-wrap:anywhere}
.err{color:var(--bad);font-size:13px;margin-top:8px;overflow-wrap:anywhere}
.muted{color:var(--muted)}
.off{color:var(--muted);font-size:14px}
.nums{display:grid;grid-template-columns:repeat(auto-fit,minmax(110px,1fr));gap:10px}
.num{background:var(--bg);border-radius:10px;padding:10px 12px}
.num b{display:block;font-size:22px;line-height:1.1}
.num span{color:var(--muted);font-size:12px}
.chart svg{width:100%;height:130px;display:block}
.chart .legend{display:flex;gap:14px;font-size:12px;color:var(--muted);margin-top:6px;flex-wrap:wrap}
.chart .legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.k-in{background:var(--in);fill:var(--in)}.k-out{background:var(--out);fill:var(--out)}.k-turn{background:var(--turn)}
.turnline{stroke:var(--turn);fill:none;stroke-width:2;vector-effect:non-scaling-stroke}
.axis{stroke:var(--line);stroke-width:1;vector-effect:non-scaling-stroke}
ol.activity{list-style:none;margin:0;padding:0;font-size:14px}
ol.activity li{display:grid;grid-template-columns:72px 84px 1fr auto;gap:8px;padding:6px 0;border-top:1px solid var(--line);align-items:baseline}
ol.activity li:first-child{border-top:0}
ol.activity time,ol.activity .dur{color:var(--muted);font-variant-numeric:tabular-nums;font-size:13px}
.dir-in{color:var(--in)}.dir-out{color:var(--out)}
@media (max-width:560px){ol.activity li{grid-template-columns:62px 1fr auto}ol.activity .ch{display:none}
.top{padding-top:12px}.conn{margin-left:0}}
footer{color:var(--muted);font-size:12px;text-align:center;padding:20px 0 30px}
a{color:var(--accent)}
form .step{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px;margin:0 0 14px}
form .step>h2{display:flex;gap:8px;align-items:center}
form .step>h2 .n{display:inline-grid;place-items:center;width:22px;height:22px;border-radius:50%;background:var(--accent);color:#fff;font-size:12px}
label{display:block;font-weight:600;font-size:14px;margin:12px 0 4px}
.help{font-weight:400;color:var(--muted);font-size:12.5px;display:block;margin-top:2px}
input[type=text],input[type=password],input[type=url],input[type=number],select{width:100%;font:inherit;padding:9px 11px;border-radius:8px;
border:1px solid var(--line);background:var(--bg);color:var(--ink)}
input:focus,select:focus{outline:2px solid var(--accent);outline-offset:1px}
.check{display:flex;gap:10px;align-items:center;font-weight:600;margin:12px 0 4px}
.check input{width:18px;height:18px}
details.channel{border:1px solid var(--line);border-radius:10px;padding:0 12px;margin:10px 0;background:var(--card)}
details.channel>summary{cursor:pointer;padding:12px 0;font-weight:600;display:flex;justify-content:space-between;gap:8px;list-style:none}
details.channel>summary::-webkit-details-marker{display:none}
details.channel[open]>summary{border-bottom:1px solid var(--line);margin-bottom:4px}
details.more{margin:12px 0 4px}
details.more>summary{cursor:pointer;color:var(--muted);font-size:13px}
.field-error{color:var(--bad);font-size:13px;margin-top:4px}
.banner{border-radius:12px;padding:12px 16px;margin:0 0 14px}
.banner.bad{background:var(--bad-bg);color:var(--bad)}
.banner.ok{background:var(--ok-bg);color:var(--ok)}
.banner.warn{background:var(--warn-bg);color:var(--warn)}
.actions{display:flex;gap:12px;align-items:center;margin:6px 0 24px;flex-wrap:wrap}
button{font:inherit;font-weight:600;border:0;border-radius:10px;padding:11px 20px;background:var(--accent);color:#fff;cursor:pointer}
button:focus-visible{outline:2px solid var(--ink);outline-offset:2px}
.lead{color:var(--muted);margin:4px 0 16px}
button.secondary{background:transparent;color:var(--accent);border:1px solid var(--accent);padding:8px 14px;margin:10px 0 4px;white-space:normal;text-align:left}
.field-note{font-size:13px;margin-top:6px;padding:8px 10px;border-radius:8px;background:var(--bg);border:1px solid var(--line)}
.field-note.ok{background:var(--ok-bg);color:var(--ok);border-color:transparent}
.field-note.warn{background:var(--warn-bg);color:var(--warn);border-color:transparent}
.found{border:1px solid var(--line);border-radius:10px;padding:4px 12px 12px;margin:8px 0 6px;background:var(--bg)}
.found ul{margin:6px 0;padding-left:18px;font-size:14px}
.found code,.found li{overflow-wrap:anywhere}
.pair-wait:has(~ *){display:none}
button.implicit{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);border:0}
.talk{margin-top:14px}
.talk-state{font-size:18px;font-weight:600;margin:4px 0 10px}
.talk-state[data-state=speaking]{color:var(--out)}.talk-state[data-state=hearing]{color:var(--in)}.talk-state[data-state=ended]{color:var(--muted)}
.talk meter{width:100%;height:14px}
.talk .actions button.secondary{margin:0;padding:11px 20px}
.modes{border:0;padding:0;margin:8px 0}.modes legend{font-size:13px;color:var(--muted);padding:0}
.modes .check{font-weight:600;flex-wrap:wrap}.modes .help{flex-basis:100%;margin-left:28px}
button:disabled{opacity:.45;cursor:default}
#ptt{touch-action:none;user-select:none}
.notice p{margin:0 0 6px}.notice button.secondary{margin:4px 8px 0 0}
ol.transcript{list-style:none;margin:0;padding:0;font-size:15px}
ol.transcript li{padding:7px 0;border-top:1px solid var(--line)}ol.transcript li:first-child{border-top:0}
ol.transcript li b{margin-right:8px}ol.transcript li.user b{color:var(--in)}ol.transcript li.assistant b{color:var(--out)}
`;
