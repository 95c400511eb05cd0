// Runs a list of calls directly on the plugin module (no server), for comparison with the same calls
// made through the Open WebUI tool file and `fileshed serve`. Input (stdin, JSON): { base, user,
// chat, calls: [{ name, args, files?: [{ name, b64 }] }] }. Output: [{ result, events }].
import { Tools } from '../../dist/fileshed.mjs';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (d) => (text += d));
  process.stdin.on('end', () => resolve(text));
}));
let attached = [];
// Attachments reach the plugin the way the server passes them: the host bridge holds their bytes.
const tools = new Tools({ host: { name: 'direct', attachedFiles: () => attached }, valves: { storage_base_path: input.base } });
const out = [];
for (const call of input.calls) {
  attached = (call.files ?? []).map((f) => ({ name: f.name, bytes: new Uint8Array(Buffer.from(f.b64, 'base64')) }));
  const events = [];
  const json = await tools[call.name]({
    ...call.args,
    __user__: { ...input.user, valves: {} },
    __metadata__: { chat_id: input.chat, message_id: 'm-1' },
    __event_emitter__: async (e) => events.push(e),
  });
  out.push({ result: JSON.parse(json), events });
}
process.stdout.write(JSON.stringify(out));
