/**
 * The helpers' value types and the schema agree: every plain value a helper writes has a type the
 * schema's zod schema accepts. Compile-time only (checked by `npm test`'s type check); a change to
 * either side that breaks the agreement fails the build, here, with both names.
 * Pure module (types only).
 */
import type { z } from 'zod';
import type { ChatAuthor } from '../chat.ts';
import type { DataTable } from '../notebook/data.ts';
import type { KernelCommand, KernelStatus, PendingRun, RunRequest, StaleMark } from '../notebook/runs.ts';
import type { JupyterCellRecord } from '../notebook/jupyter.ts';
import type { AuditEntry, PlanStep, RunRequestInfo, RunSignal, TokenUsage, UndoOutcome } from '../agent/runs.ts';
import type { Proposal, ProposalOutcome } from '../agent/actions.ts';
import type { Suggestions } from '../agent/suggestions.ts';
import type { JobInput, JobProgress, JobRequester, JobSignal, RoiEdit } from '../analysis/jobs.ts';
import type { Alternative, ParamValue, PickedAlternative, ProvenanceLink, RunRoute, StepVerdict, ToolScope, ValueExpectation } from '../agent/plans.ts';
import type { LibraryDoc } from '../library/library.ts';
import type { CheckpointRecord } from '../history/checkpoints.ts';
import type { AtlasCategory, AtlasCoords, AtlasHighlight, AtlasSelection } from '../atlas/atlas.ts';
import type { Presentation } from '../presentation.ts';
import type { ForkOrigin, RaisedHand, RosterEntry } from '../forks/forks.ts';
import type * as W from './workspace-schema.ts';

/** `Value` (what a helper writes) must be a value of schema `S`. */
type Fits<S extends z.ZodType, Value extends z.input<S>> = Value;

export type HelperValuesFitTheSchema = [
  Fits<typeof W.runRequest, RunRequest>,
  Fits<typeof W.kernelCommand, KernelCommand>,
  Fits<typeof W.pendingRun, PendingRun>,
  Fits<typeof W.staleMark, StaleMark>,
  Fits<typeof W.kernelStatus, KernelStatus>,
  Fits<typeof W.chatAuthor, ChatAuthor>,
  Fits<typeof W.proposal, Proposal>,
  Fits<typeof W.proposalOutcome, ProposalOutcome>,
  Fits<typeof W.suggestions, Suggestions>,
  Fits<typeof W.runRequestInfo, RunRequestInfo>,
  Fits<typeof W.runSignal, RunSignal>,
  Fits<typeof W.tokenUsage, TokenUsage>,
  Fits<typeof W.planStep, PlanStep>,
  Fits<typeof W.auditEntry, AuditEntry>,
  Fits<typeof W.undoOutcome, UndoOutcome>,
  Fits<typeof W.dataTable, DataTable>,
  Fits<typeof W.jupyterCell, JupyterCellRecord>,
  Fits<typeof W.jobRequester, JobRequester>,
  Fits<typeof W.jobInput, JobInput>,
  Fits<typeof W.jobProgress, JobProgress>,
  Fits<typeof W.runSignal, JobSignal>,
  Fits<typeof W.roiEdit, RoiEdit>,
  Fits<typeof W.runRoute, RunRoute>,
  Fits<typeof W.toolScopes, ToolScope[]>,
  Fits<typeof W.alternative, Alternative>,
  Fits<typeof W.pickedAlternative, PickedAlternative>,
  Fits<typeof W.paramValues, Record<string, ParamValue>>,
  Fits<typeof W.valueExpectations, Record<string, ValueExpectation>>,
  Fits<typeof W.stepVerdict, StepVerdict>,
  Fits<typeof W.provenanceLinks, ProvenanceLink[]>,
  Fits<typeof W.stepValues, Record<string, number | string>>,
  Fits<typeof W.libraryDoc, LibraryDoc>,
  Fits<typeof W.checkpointRecord, CheckpointRecord>,
  Fits<typeof W.atlasCoords, AtlasCoords>,
  Fits<typeof W.atlasSelection, AtlasSelection>,
  Fits<typeof W.atlasHighlight, AtlasHighlight>,
  Fits<typeof W.atlasCategory, AtlasCategory>,
  Fits<typeof W.forkOrigin, ForkOrigin>,
  Fits<typeof W.raisedHand, RaisedHand>,
  Fits<typeof W.rosterEntry, RosterEntry>,
  Fits<typeof W.presentation, Presentation>,
];
