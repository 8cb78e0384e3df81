export { QuietWebSocket } from '@plexus/peer';
