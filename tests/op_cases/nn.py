"""Cases for nn ops (conv2d, pool2d, batch_norm, dropout, embeddings) and metrics."""
