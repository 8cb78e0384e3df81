/** Who asks the kernel for runs: the local person of a session, with their current name. Pure. */
import type { Requester } from '@plexus/shared';
import type { WorkspaceSession } from '../../collab/session.ts';
import { useLocalUser } from '../../state/user.ts';

export const requesterOf = (session: WorkspaceSession): Requester => ({ id: session.origin.userId, name: useLocalUser.getState().user.name });
