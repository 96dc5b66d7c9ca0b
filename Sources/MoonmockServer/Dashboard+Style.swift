extension Dashboard {
    /// The page's CSS. Status colours: 2xx green, 3xx blue, 4xx amber, 5xx red, faults purple
    /// with a stripe, unmatched requests marked apart from any status.
    static let style = #"""
:root { --fg: #1d2330; --muted: #677085; --line: #dde1e8; --bg: #fff; --panel: #f6f7f9; --sel: #e3ecff;
  --s2: #137333; --s3: #1a5fb4; --s4: #a35200; --s5: #c01c28; --fault: #7b2cbf; --row: 26px; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: .75rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header h1 { font-size: 1.1rem; margin: 0; }
.grow { flex: 1; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; word-break: break-all; background: var(--panel); padding: .5rem; border-radius: 4px; margin: .25rem 0 .75rem; max-height: 24rem; overflow: auto; }
button { font: inherit; padding: .2rem .6rem; border: 1px solid #b8bfcc; border-radius: 4px; background: #fff; cursor: pointer; }
button:hover { background: #eef1f6; } button[aria-pressed="true"] { background: #fff4d6; border-color: #d9a400; }
button:focus-visible, select:focus-visible, input:focus-visible, #list:focus-visible, textarea:focus-visible { outline: 2px solid #3a6ee8; outline-offset: 1px; }
input, select, textarea { font: inherit; padding: .2rem .4rem; border: 1px solid #b8bfcc; border-radius: 4px; }
kbd { font: 11px ui-monospace, monospace; border: 1px solid #c5cbd6; border-bottom-width: 2px; border-radius: 3px; padding: 0 .25rem; background: #fff; }
.keys { color: var(--muted); font-size: 12px; }
.live { font-size: 12px; padding: .1rem .5rem; border-radius: 1rem; background: #e8eaee; }
.live.on { background: #dff3e4; color: var(--s2); } .live.polling { background: #fff4d6; color: var(--s4); } .live.off { background: #fde2e4; color: var(--s5); }
.good { color: var(--s2); } .bad { color: var(--s5); } .hint { color: var(--muted); padding: 1rem; }
#banner { background: #fde2e4; color: #7a0c14; border-bottom: 2px solid var(--s5); padding: .6rem 1rem; white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 13px; }
#banner strong { font-family: system-ui, sans-serif; }
#toast { position: fixed; bottom: 1rem; right: 1rem; background: var(--fg); color: #fff; padding: .5rem .8rem; border-radius: 4px; max-width: 40rem; z-index: 2; }
#toast.bad { background: var(--s5); }
#login { padding: 2rem 1rem; }
nav { display: flex; gap: .25rem; align-items: center; padding: .4rem 1rem 0; border-bottom: 1px solid var(--line); }
nav [role=tab] { border-bottom: none; border-radius: 4px 4px 0 0; }
nav [role=tab][aria-selected=true] { background: var(--sel); font-weight: 600; }
section { padding: .5rem 1rem; }
h2 { font-size: 1rem; margin: 1.2rem 0 .4rem; } h2 small { color: var(--muted); font-weight: normal; }
h3 { font-size: .9rem; margin: .8rem 0 .2rem; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
.filters { display: flex; gap: .4rem; flex-wrap: wrap; align-items: center; margin-bottom: .5rem; }
#f-text { flex: 1; min-width: 12rem; }
#count { color: var(--muted); font-size: 12px; }
.split { display: grid; grid-template-columns: minmax(22rem, 1fr) minmax(24rem, 1.2fr); gap: .75rem; height: calc(100vh - 9.5rem); min-height: 20rem; }
#list { position: relative; overflow-y: auto; border: 1px solid var(--line); border-radius: 4px; }
#spacer { position: relative; }
#rows { position: absolute; left: 0; right: 0; top: 0; }
.row { position: absolute; left: 0; right: 0; height: var(--row); display: flex; align-items: center; gap: .5rem; padding: 0 .5rem;
  border-bottom: 1px solid #eef0f3; cursor: pointer; white-space: nowrap; border-left: 4px solid transparent; }
.row:hover { background: #f3f6fb; } .row[aria-selected=true] { background: var(--sel); }
.row .id { color: var(--muted); width: 3.5rem; text-align: right; font-size: 12px; }
.row .t { color: var(--muted); font-size: 12px; width: 4.6rem; }
.row .m { font-weight: 600; width: 4rem; font-size: 12px; }
.row .u { flex: 1; overflow: hidden; text-overflow: ellipsis; }
.row .r { color: var(--muted); max-width: 12rem; overflow: hidden; text-overflow: ellipsis; font-size: 12px; }
.badge { display: inline-block; min-width: 2.6rem; text-align: center; border-radius: 3px; padding: 0 .3rem; font-size: 12px; font-weight: 600; color: #fff; }
.s2 .badge, .badge.s2 { background: var(--s2); } .s3 .badge, .badge.s3 { background: var(--s3); }
.s4 .badge, .badge.s4 { background: var(--s4); } .s5 .badge, .badge.s5 { background: var(--s5); }
.fault .badge, .badge.fault { background: repeating-linear-gradient(135deg, var(--fault) 0 6px, #5a1f8f 6px 12px); }
.row.s2 { border-left-color: var(--s2); } .row.s3 { border-left-color: var(--s3); } .row.s4 { border-left-color: var(--s4); }
.row.s5 { border-left-color: var(--s5); } .row.fault { border-left-color: var(--fault); }
.unmatched-tag { font-size: 11px; color: var(--s5); border: 1px solid var(--s5); border-radius: 3px; padding: 0 .25rem; }
#inspector { overflow-y: auto; border: 1px solid var(--line); border-radius: 4px; padding: .25rem .75rem; }
#inspector .hint { padding: .25rem 0; }
#inspector h2 { margin-top: .5rem; word-break: break-all; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .75rem; margin: .25rem 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; word-break: break-all; }
table.headers td { padding: .1rem .5rem; font-family: ui-monospace, monospace; font-size: 12px; word-break: break-all; }
table.headers td:first-child { color: var(--muted); white-space: nowrap; width: 1%; }
.actions { display: flex; gap: .4rem; margin: .5rem 0; flex-wrap: wrap; }
ul.miss { list-style: none; padding: 0; margin: .25rem 0; } ul.miss > li { margin-bottom: .5rem; }
ul.checks { list-style: none; padding-left: 1rem; margin: .1rem 0; }
.ok::before { content: "✓ "; color: var(--s2); } .no::before { content: "✗ "; color: var(--s5); }
.no { color: var(--s5); }
.error { background: #fde2e4; color: #7a0c14; }
.chip { font-size: 11px; border-radius: 3px; padding: 0 .3rem; background: #e8eaee; color: var(--muted); }
.chip.spent { background: #fde2e4; color: var(--s5); }
form.grid { display: grid; grid-template-columns: repeat(4, minmax(8rem, 1fr)); gap: .5rem; max-width: 60rem; }
form.grid label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: .15rem; }
form.grid .wide { grid-column: 1 / -1; }
.row-form { display: flex; gap: .4rem; align-items: center; margin-top: .75rem; }
td input.edit { width: 100%; font-family: ui-monospace, monospace; }

"""#
}
