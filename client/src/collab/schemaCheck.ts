/**
 * The document schema's check of one transaction, for the session's check of its own writes
 * (session.ts). A module of its own so that the schema, and zod under it, load as a separate
 * chunk once the page is idle instead of with the code the notebook needs to open.
 */
export { checkTransaction } from '@plexus/shared/doc-schema/check';
