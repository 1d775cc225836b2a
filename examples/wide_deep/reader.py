"""WideDeepDataset: samples of Criteo-format files (label, 13 counts, 26 categorical values) as the
wide & deep model's inputs: the counts scaled by their usual range, each categorical value hashed to
an id, the label."""

import os
import zlib

cont_min_ = [0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
cont_diff_ = [20, 603, 100, 50, 64000, 500, 100, 50, 500, 10, 10, 10, 50]
hash_dim_ = 1000001
continuous_range_ = range(1, 14)
categorical_range_ = range(14, 40)


class WideDeepDataset:
    def __init__(self, data_path):
        self.file_list = sorted(os.path.join(data_path, x) for x in os.listdir(data_path))

    def line_process(self, line):
        features = line.rstrip("\n").split("\t")
        dense_feature = [
            0.0 if features[idx] == "" else (float(features[idx]) - cont_min_[idx - 1]) / cont_diff_[idx - 1]
            for idx in continuous_range_
        ]
        # a stable hash: Python's own hash of a string differs from process to process
        sparse_feature = [[zlib.crc32((str(idx) + features[idx]).encode()) % hash_dim_] for idx in categorical_range_]
        label = [int(features[0])]
        return [dense_feature] + sparse_feature + [label]

    def __call__(self):
        for file in self.file_list:
            with open(file) as f:
                for line in f:
                    yield self.line_process(line)
