/**
 * The rule for naming an SQL cell's result or an uploaded table. Its own module, so that code
 * needing only the rule (the browser's table and name inputs) does not bring in the JavaScript
 * parser of analysis.ts. Pure module.
 */

/** A valid name for an SQL cell's result: a plain identifier usable from JavaScript and SQL. */
export const SQL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
