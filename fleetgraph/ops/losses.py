"""Loss ops beyond cross entropy: sigmoid cross entropy, huber, smooth L1, KL, ranking and pairwise losses."""
