/**
 * The ways the New-map form offers to place a table's rows, with what each one says about itself:
 * text columns always by TF-IDF computed on the Plexus server, and by embeddings only when the
 * server says it has an embedding service (`GET /api/config`), named by its model — so a person
 * knows whether the texts leave the server before choosing. Pure module.
 */
import type { AtlasMethod, AtlasServerConfig } from '@plexus/shared';

export interface MapMethod {
  value: AtlasMethod;
  label: string;
  /** One line on what the method does (shown under the choices, and as the choice's tooltip). */
  hint: string;
}

/** Said under the TF-IDF choice on a server without an embedding service. */
export const NO_EMBEDDINGS_NOTE = 'Embeddings are not available: this server has no embedding service (PLEXUS_EMBEDDINGS_URL).';

/** The methods in the order the form lists them; `embeddings` only with a service (null: not known yet, or none). */
export function mapMethods(server: AtlasServerConfig | null): MapMethod[] {
  const model = server?.embeddings?.model;
  return [
    { value: 'pca', label: 'PCA', hint: 'Principal components of the numeric columns: fast, linear, distances mean something.' },
    { value: 'umap', label: 'UMAP', hint: 'A UMAP embedding of the numeric columns: neighbourhoods and clusters, not global distances.' },
    { value: 'columns', label: 'x / y columns', hint: 'Two columns as they are, as in a scatter plot.' },
    { value: 'tfidf', label: 'Text: TF-IDF + SVD (local)', hint: 'Rows of a text column placed by the words they share (TF-IDF, then a 2-D reduction), computed on this Plexus server: no text leaves it.' },
    ...(model
      ? [{ value: 'embeddings' as const, label: `Text: embeddings (${model})`, hint: `Rows of a text column placed by meaning: each distinct text is sent to the server's embedding service (${model}), then UMAP reduces the vectors to 2-D.` }]
      : []),
  ];
}
