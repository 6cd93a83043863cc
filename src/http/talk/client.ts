/**
 * The Talk page's script: the browser side of the companion protocol
 * (docs/realtime.md). The microphone is read at 24 kHz (an AudioContext at
 * the protocol's rate, so nothing is resampled here), turned into PCM16 and
 * sent as `audio` frames — all the time hands-free, while the button is held
 * in push-to-talk (released: `commit`). Answer audio is queued back to back
 * as it arrives and dropped at once on `interrupted`; pressing to talk over
 * an answer sends `interrupt`. The element `#played` counts what was played
 * (its `data-ms`), the one number the page keeps for itself.
 *
 * A constant, pinned by hash in the page's Content-Security-Policy
 * (src/http/page.ts); it builds every element it adds with textContent.
 */
export const TALK_SCRIPT = `(()=>{"use strict";
const RATE=24000;
const $=(id)=>document.getElementById(id);
const state=$("state"),level=$("level"),list=$("transcript"),notices=$("notices"),conn=$("conn"),played=$("played");
const startB=$("start"),endB=$("end"),ptt=$("ptt");
let ws=null,ctx=null,mic=null,proc=null,mode="server",talking=false,live=false,next=0,sources=[],playedMs=0;
const say=(s,t)=>{state.dataset.state=s;state.textContent=t;};
const link=(c,t)=>{conn.className="conn "+c;conn.textContent=t;};
const send=(o)=>{if(ws&&ws.readyState===1)ws.send(JSON.stringify(o));};
const b64=(bytes)=>{let s="";for(let i=0;i<bytes.length;i+=32768)s+=String.fromCharCode.apply(null,bytes.subarray(i,i+32768));return btoa(s);};
const unb64=(t)=>{const s=atob(t),o=new Uint8Array(s.length);for(let i=0;i<s.length;i++)o[i]=s.charCodeAt(i);return o;};
const listening=()=>say("listening",mode==="server"?"Listening: speak whenever you like.":"Hold the button while you speak.");
function line(role,item,text,whole){
  let li=null;for(const el of list.children)if(el.dataset.item===item&&el.dataset.role===role)li=el;
  if(!li){li=document.createElement("li");li.dataset.item=item;li.dataset.role=role;li.className=role;
    const who=document.createElement("b");who.textContent=role==="user"?"You":"Fermix";li.append(who,document.createElement("span"));list.append(li);}
  const words=li.lastChild;words.textContent=whole?text:words.textContent+text;li.scrollIntoView({block:"nearest"});
}
function notice(m){
  const box=document.createElement("div");box.className="banner warn notice";
  const p=document.createElement("p");p.textContent=m.text;box.append(p);
  for(const b of m.buttons||[]){const btn=document.createElement("button");btn.type="button";btn.className="secondary";btn.textContent=b.label;
    btn.addEventListener("click",()=>{send({type:"press",data:b.data});for(const x of box.querySelectorAll("button"))x.disabled=true;});box.append(btn);}
  notices.prepend(box);
}
function play(bytes){
  const n=bytes.length>>1;if(n===0)return;
  const buf=ctx.createBuffer(1,n,RATE),ch=buf.getChannelData(0),v=new DataView(bytes.buffer,bytes.byteOffset,n*2);
  for(let i=0;i<n;i++)ch[i]=v.getInt16(i*2,true)/32768;
  const src=ctx.createBufferSource();src.buffer=buf;src.connect(ctx.destination);
  const at=Math.max(ctx.currentTime,next);src.start(at);next=at+buf.duration;sources.push(src);
  src.onended=()=>{sources=sources.filter((s)=>s!==src);
    if(!src.cut){playedMs+=buf.duration*1000;played.dataset.ms=String(Math.round(playedMs));played.textContent=(playedMs/1000).toFixed(1)+" s";}
    if(sources.length===0&&live)listening();};
  say("speaking","Fermix is speaking…");
}
function cut(){for(const s of sources){s.cut=true;try{s.stop();}catch(e){}}sources=[];next=0;}
function stopMic(){if(proc){proc.disconnect();proc=null;}if(mic){for(const t of mic.getTracks())t.stop();mic=null;}level.value=0;}
function finish(words){live=false;cut();stopMic();if(words)say("ended",words);startB.disabled=false;endB.disabled=true;ptt.disabled=true;}
function onEvent(m){
  switch(m.type){
    case "ready":live=true;ptt.disabled=false;listening();break;
    case "audio":play(unb64(m.audio));break;
    case "transcript":line(m.role,m.item_id,m.final?m.text:m.delta,m.final);break;
    case "speech_started":if(live&&sources.length===0)say("hearing","Hearing you…");break;
    case "interrupted":cut();if(live)listening();break;
    case "tool":if(m.state==="running")say("working","Working: "+m.name+"…");break;
    case "notice":notice(m);break;
    case "error":notice({text:m.message});if(m.code==="busy"||m.code==="disabled"||m.code==="upstream_refused")finish(m.message);break;
    case "ended":finish(m.message);if(ws)ws.close();break;
  }
}
async function start(){
  startB.disabled=true;
  if(!window.isSecureContext||!navigator.mediaDevices){finish("The microphone needs this machine (localhost) or https.");return;}
  try{
    ctx=ctx||new AudioContext({sampleRate:RATE});await ctx.resume();
    mic=await navigator.mediaDevices.getUserMedia({audio:{channelCount:1,echoCancellation:true,noiseSuppression:true,autoGainControl:true}});
  }catch(e){finish("No microphone: "+(e&&e.message?e.message:e));return;}
  const source=ctx.createMediaStreamSource(mic),mute=ctx.createGain();mute.gain.value=0;
  proc=ctx.createScriptProcessor(2048,1,1);source.connect(proc);proc.connect(mute);mute.connect(ctx.destination);
  proc.onaudioprocess=(e)=>{const f=e.inputBuffer.getChannelData(0),pcm=new Int16Array(f.length);let sum=0;
    for(let i=0;i<f.length;i++){const x=Math.max(-1,Math.min(1,f[i]));sum+=x*x;pcm[i]=x<0?x*32768:x*32767;}
    level.value=Math.min(1,Math.sqrt(sum/f.length)*4);
    if(live&&(mode==="server"||talking))send({type:"audio",audio:b64(new Uint8Array(pcm.buffer))});};
  endB.disabled=false;say("connecting","Connecting…");
  ws=new WebSocket((location.protocol==="https:"?"wss://":"ws://")+location.host+"/talk/ws");
  ws.onopen=()=>{link("live","connected");send({type:"start",turn_detection:mode,client:"the Talk page"});};
  ws.onmessage=(e)=>{try{onEvent(JSON.parse(e.data));}catch(err){}};
  ws.onclose=()=>{link("lost","not connected");ws=null;
    if(live)finish("Disconnected from Fermix.");
    else finish(state.dataset.state==="connecting"?"Could not reach the voice session: is realtime voice on? (see the status page)":"");};
}
startB.addEventListener("click",()=>void start());
endB.addEventListener("click",()=>{send({type:"stop"});});
for(const r of document.querySelectorAll("input[name=mode]"))r.addEventListener("change",()=>{
  mode=r.value;ptt.hidden=mode!=="manual";send({type:"mode",turn_detection:mode});if(live)listening();});
const press=(e)=>{e.preventDefault();if(!live)return;if(sources.length>0){cut();send({type:"interrupt"});}talking=true;say("hearing","Talking…");};
const release=()=>{if(!talking)return;talking=false;send({type:"commit"});};
ptt.addEventListener("pointerdown",press);ptt.addEventListener("pointerup",release);ptt.addEventListener("pointerleave",release);
})();`;
