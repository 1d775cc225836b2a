"""Feature projections over sequences and pairs: bilinear_tensor_product, row_conv, im2sequence, position encoding."""
