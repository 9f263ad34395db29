import net from 'node:net';
import { createPgEventBus } from './pg-events.ts';
const srv = net.createServer(() => {}); // accepts, never answers
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
const port = (srv.address() as net.AddressInfo).port;
const b = createPgEventBus({ connectionString: `postgres://x:y@127.0.0.1:${port}/db` });
const sub = b.subscribe('t');
await new Promise((r) => setTimeout(r, 300));
const t = Date.now();
await b.close();
console.log('closed in', Date.now() - t, 'ms', await sub.next());
await sub.ready;
srv.close(); 
