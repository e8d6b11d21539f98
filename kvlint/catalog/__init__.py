"""resolve: the model catalog (HF config facts) and the GPU catalog (the memory the engine sees)."""
