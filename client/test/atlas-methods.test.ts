/** The New-map form's methods: text maps by TF-IDF always (said to be local), by embeddings only when the server names a model. */
import { describe, expect, it } from 'vitest';
import { ATLAS_METHODS } from '@plexus/shared';
import { mapMethods } from '../src/atlas/methods.ts';

describe('map methods offered', () => {
  it('without an embedding service (or before the server has said): TF-IDF only, labelled local', () => {
    for (const server of [null, { embeddings: null }]) {
      const m = mapMethods(server);
      expect(m.map((x) => x.value)).toEqual(['pca', 'umap', 'columns', 'tfidf']);
      expect(m.find((x) => x.value === 'tfidf')).toMatchObject({ label: 'Text: TF-IDF + SVD (local)', hint: expect.stringContaining('no text leaves it') });
    }
  });

  it('with one: embeddings too, named by the model, saying the texts go to the service', () => {
    const m = mapMethods({ embeddings: { model: 'text-embedding-3-small' } });
    expect(m.map((x) => x.value)).toEqual(['pca', 'umap', 'columns', 'tfidf', 'embeddings']);
    expect(m.at(-1)).toEqual({
      value: 'embeddings',
      label: 'Text: embeddings (text-embedding-3-small)',
      hint: "Rows of a text column placed by meaning: each distinct text is sent to the server's embedding service (text-embedding-3-small), then UMAP reduces the vectors to 2-D.",
    });
    // Every method the document knows is offered (given a service).
    expect(new Set(m.map((x) => x.value))).toEqual(new Set(ATLAS_METHODS));
  });
});
