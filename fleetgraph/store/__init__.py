"""Storage: checkpoints, persistables and inference models, written as atomic directories with manifests."""
