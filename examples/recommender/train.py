"""Paddle's book chapter recommender_system on `paddle.dataset.movielens`, fluid 1.x.

    python train.py [--train_batches 200] [--lr 0.2] [--save_dirname recommender_system.inference.model]

A user's id, gender, age and job, each embedded and through a fully connected layer, make a user
feature of 200 (tanh); a movie's id (embedded, fc), its genres (an embedding summed by
`sequence_pool`) and its title words (an embedding through `fluid.nets.sequence_conv_pool`) make a
movie feature of 200. Their cosine similarity times 5 predicts the rating (as the dataset gives
it: rating * 2 - 5, from -3 to 5), the square error is minimized by SGD. It prints the test set's
mean square error as it trains, and at the end that of predicting the training ratings' mean
(and both as the root mean square error of a rating in stars);
then it loads the saved inference model and predicts the first test rating with LoD tensors.
"""

import argparse
import itertools
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
from fleetgraph.fluid import nets  # noqa: E402

IS_SPARSE = True
BATCH_SIZE = 256

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--train_batches", type=int, default=200, help="batches of 256 to train on (211 make a pass)")
parser.add_argument("--lr", type=float, default=0.2)
parser.add_argument("--save_dirname", default="recommender_system.inference.model")
args = parser.parse_args()

feed_order = ["user_id", "gender_id", "age_id", "job_id", "movie_id", "category_id", "movie_title", "score"]


def embedded_fc(name, dict_size, width, param_attr):
    """An id input, its embedding of WIDTH and a fully connected layer of WIDTH over it."""
    ids = fluid.data(name=name, shape=[-1], dtype="int64")
    emb = fluid.embedding(input=ids, size=[dict_size, width], param_attr=param_attr, is_sparse=IS_SPARSE)
    return fluid.layers.fc(input=emb, size=width)


def get_usr_combined_features():
    movielens = paddle.dataset.movielens
    usr_fc = embedded_fc("user_id", movielens.max_user_id() + 1, 32, "user_table")
    usr_gender_fc = embedded_fc("gender_id", 2, 16, "gender_table")
    usr_age_fc = embedded_fc("age_id", len(movielens.age_table), 16, "age_table")
    usr_job_fc = embedded_fc("job_id", movielens.max_job_id() + 1, 16, "job_table")
    concat_embed = fluid.layers.concat(input=[usr_fc, usr_gender_fc, usr_age_fc, usr_job_fc], axis=1)
    return fluid.layers.fc(input=concat_embed, size=200, act="tanh")


def get_mov_combined_features():
    movielens = paddle.dataset.movielens
    mov_fc = embedded_fc("movie_id", movielens.max_movie_id() + 1, 32, "movie_table")
    category_id = fluid.data(name="category_id", shape=[-1], dtype="int64", lod_level=1)
    mov_categories_emb = fluid.embedding(
        input=category_id, size=[len(movielens.movie_categories()), 32], is_sparse=IS_SPARSE
    )
    mov_categories_hidden = fluid.layers.sequence_pool(input=mov_categories_emb, pool_type="sum")
    mov_title_id = fluid.data(name="movie_title", shape=[-1], dtype="int64", lod_level=1)
    mov_title_emb = fluid.embedding(
        input=mov_title_id, size=[len(movielens.get_movie_title_dict()), 32], is_sparse=IS_SPARSE
    )
    mov_title_conv = nets.sequence_conv_pool(
        input=mov_title_emb, num_filters=32, filter_size=3, act="tanh", pool_type="sum"
    )
    concat_embed = fluid.layers.concat(input=[mov_fc, mov_categories_hidden, mov_title_conv], axis=1)
    return fluid.layers.fc(input=concat_embed, size=200, act="tanh")


def inference_program():
    inference = fluid.layers.cos_sim(X=get_usr_combined_features(), Y=get_mov_combined_features())
    scale_infer = fluid.layers.scale(x=inference, scale=5.0)
    label = fluid.data(name="score", shape=[-1, 1], dtype="float32")
    avg_cost = fluid.layers.mean(fluid.layers.square_error_cost(input=scale_infer, label=label))
    return scale_infer, avg_cost


def train(place):
    main_program, startup_program = fluid.default_main_program(), fluid.default_startup_program()
    main_program.random_seed = startup_program.random_seed = 90
    random.seed(90)  # paddle.reader.shuffle's order
    scale_infer, avg_cost = inference_program()
    test_program = main_program.clone(for_test=True)
    fluid.optimizer.SGD(learning_rate=args.lr).minimize(avg_cost)

    exe = fluid.Executor(place)
    feeder = fluid.DataFeeder([main_program.global_block().var(name) for name in feed_order], place)
    train_reader = paddle.batch(
        paddle.reader.shuffle(paddle.dataset.movielens.train(), buf_size=8192), batch_size=BATCH_SIZE
    )
    test_reader = paddle.batch(paddle.dataset.movielens.test(), batch_size=BATCH_SIZE)

    def train_test():
        """The mean square error over the whole test set."""
        costs, sizes = [], []
        for data in test_reader():
            costs.append(float(exe.run(test_program, feed=feeder.feed(data), fetch_list=[avg_cost])[0][0]))
            sizes.append(len(data))
        return np.average(costs, weights=sizes)

    exe.run(startup_program)
    batches = itertools.islice(
        itertools.chain.from_iterable(train_reader() for _ in itertools.count()), args.train_batches
    )
    for batch_id, data in enumerate(batches, 1):
        (out,) = exe.run(main_program, feed=feeder.feed(data), fetch_list=[avg_cost])
        if np.isnan(out).any():
            sys.exit("got NaN loss, training failed.")
        if batch_id % 50 == 0 or batch_id == args.train_batches:
            test_loss = train_test()
            print(f"BatchID {batch_id}, Test Loss {test_loss:.4f}")
    fluid.io.save_inference_model(args.save_dirname, feed_order[:-1], [scale_infer], exe)

    mean = np.mean([sample[-1][0] for sample in paddle.dataset.movielens.train()()])
    test_scores = np.array([sample[-1][0] for sample in paddle.dataset.movielens.test()()])
    # a score is rating * 2 - 5, so an error of the score is twice that of the rating in stars
    for who, mse in (("the model", test_loss), (f"the training mean {mean:.3f}", np.mean((test_scores - mean) ** 2))):
        print(f"{who}: test mean square error {mse:.4f}, RMSE {mse**0.5 / 2:.3f} stars")


def infer(place):
    """The saved model, loaded into a scope of its own, rates the first test sample's movie."""
    exe = fluid.Executor(place)
    user, gender, age, job, movie, categories, title, score = next(paddle.dataset.movielens.test()())
    with fluid.scope_guard(fluid.core.Scope()):
        inferencer, feed_target_names, fetch_targets = fluid.io.load_inference_model(args.save_dirname, exe)
        ids = [np.array([v], dtype="int64") for v in (user, gender, age, job, movie)]
        sequences = [
            fluid.create_lod_tensor(np.array(s, dtype="int64"), [[len(s)]], place) for s in (categories, title)
        ]
        feed = dict(zip(feed_target_names, ids + sequences))
        results = exe.run(inferencer, feed=feed, fetch_list=fetch_targets, return_numpy=False)
    movie_name = paddle.dataset.movielens.movie_info()[movie].title
    predicted = np.array(results[0])[0][0]
    print(f'Predict Rating of user id {user} on movie "{movie_name.strip()}" is {predicted:.3f} (given {score[0]:.0f})')


place = fluid.CPUPlace()
train(place)
infer(place)
