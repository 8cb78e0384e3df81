export { ServicePeer, type ServicePeerOptions } from './service-peer.ts';
export { QuietWebSocket } from './quiet-ws.ts';
