"""MovieLens 1M (`paddle.dataset.movielens`): users, movies and ratings parsed from Paddle's
`ml-1m.zip`. Without the real archive, a synthetic one in the same format (6,040 users, 3,952 movies,
18 genres, Paddle's age groups and 21 jobs) is generated (said once on stderr) and parsed by the same
code; its ratings come from each movie's quality, each user's leniency, how the user's age group takes
the movie's genres, and a little of hidden tastes, so a model can learn them.

Each sample is [user id, gender (0 male), age index, job, movie id, [genre ids], [title word ids],
[rating * 2 - 5]], as Paddle's; train and test split the ratings 90/10 by a seeded draw."""

from __future__ import annotations

import functools
import re
import zipfile
from dataclasses import dataclass

import numpy as np

from .common import find_any, open_archive, zip_bytes

__all__ = [
    "age_table",
    "get_movie_title_dict",
    "max_job_id",
    "max_movie_id",
    "max_user_id",
    "movie_categories",
    "movie_info",
    "test",
    "train",
    "user_info",
]

age_table = [1, 18, 25, 35, 45, 50, 56]
_ARCHIVES = ("movielens%2Fml-1m.zip", "ml-1m.zip")
_GENRES = (
    "Action Adventure Animation Children's Comedy Crime Documentary Drama Fantasy Film-Noir Horror Musical "
    "Mystery Romance Sci-Fi Thriller War Western"
).split()


@dataclass
class MovieInfo:
    index: int
    categories: list[str]
    title: str

    def value(self, meta) -> list:
        return [
            self.index,
            [meta.categories[c] for c in self.categories],
            [meta.titles[w.lower()] for w in self.title.split()],
        ]


@dataclass
class UserInfo:
    index: int
    is_male: bool
    age: int  # index into age_table
    job_id: int

    def value(self) -> list:
        return [self.index, 0 if self.is_male else 1, self.age, self.job_id]


@functools.cache
def _synthetic_archive(users: int = 6040, movies: int = 3952, ratings: int = 60000) -> bytes:
    rng = np.random.default_rng(1)
    words = [f"t{i}" for i in range(5174)]  # ml-1m's title dictionary has 5,174 words
    movie_lines, movie_genres = [], []
    for m in range(1, movies + 1):
        extra = [words[movies + m - 1]] if movies + m - 1 < len(words) else []  # every word in some title
        title = " ".join([words[m - 1], *extra, *rng.choice(words, size=int(rng.integers(0, 3)))])
        genres = sorted(set(rng.choice(_GENRES, size=int(rng.integers(1, 4)))))
        movie_genres.append([_GENRES.index(g) for g in genres])
        movie_lines.append(f"{m}::{title} ({int(rng.integers(1919, 2001))})::{'|'.join(genres)}\n")
    ages = rng.integers(len(age_table), size=users + 1)
    user_lines = [
        f"{u}::{'MF'[int(rng.integers(2))]}::{age_table[ages[u]]}::{int(rng.integers(21))}::{10000 + u}\n"
        for u in range(1, users + 1)
    ]
    # a score: the movie's quality, the user's leniency, how the user's age group takes the movie's
    # genres, and a little of hidden tastes; what a model of Paddle's book can learn, and a little more
    quality, leniency = rng.normal(0, 0.9, size=movies + 1), rng.normal(0, 0.5, size=users + 1)
    liking = rng.normal(0, 1.0, size=(len(age_table), len(_GENRES)))
    taste, appeal = rng.normal(size=(users + 1, 4)), rng.normal(size=(movies + 1, 4))
    uid, mid = rng.integers(1, users + 1, size=ratings), rng.integers(1, movies + 1, size=ratings)
    genre_effect = np.array([liking[ages[u], movie_genres[m - 1]].mean() for u, m in zip(uid, mid)])
    raw = 3.4 + quality[mid] + leniency[uid] + genre_effect + 0.3 * (taste[uid] * appeal[mid]).sum(axis=1)
    score = np.clip(np.rint(raw + rng.normal(0, 0.3, size=ratings)), 1, 5).astype(int)
    rating_lines = [f"{u}::{m}::{s}::{978300760 + i}\n" for i, (u, m, s) in enumerate(zip(uid, mid, score))]
    lines = {"movies": movie_lines, "users": user_lines, "ratings": rating_lines}
    return zip_bytes({f"ml-1m/{name}.dat": "".join(rows).encode("latin-1") for name, rows in lines.items()})


def _package() -> zipfile.ZipFile:
    what = "6,040 users, 3,952 movies and 60,000 ratings (movie, user and age-by-genre effects), ml-1m's format"
    return zipfile.ZipFile(open_archive("movielens", _ARCHIVES, _synthetic_archive, what))


def _lines(package: zipfile.ZipFile, name: str):
    with package.open(f"ml-1m/{name}.dat") as f:
        for line in f:
            yield line.decode("latin-1").strip()


@dataclass
class _Meta:
    movies: dict[int, MovieInfo]
    users: dict[int, UserInfo]
    titles: dict[str, int]
    categories: dict[str, int]


def _meta() -> _Meta:
    return _meta_of(find_any("movielens", _ARCHIVES))


@functools.cache
def _meta_of(path: str | None) -> _Meta:
    """Movies, users, and the title-word and genre dictionaries (sorted, so ids are the same in every
    process; Paddle numbers them in set order)."""
    pattern = re.compile(r"^(.*)\((\d+)\)$")
    movies, words, genres = {}, set(), set()
    with _package() as package:
        for line in _lines(package, "movies"):
            movie_id, title, categories = line.split("::")
            categories = categories.split("|")
            genres.update(categories)
            title = pattern.match(title).group(1)
            movies[int(movie_id)] = MovieInfo(int(movie_id), categories, title)
            words.update(w.lower() for w in title.split())
        users = {}
        for line in _lines(package, "users"):
            uid, gender, age, job, _ = line.split("::")
            users[int(uid)] = UserInfo(int(uid), gender == "M", age_table.index(int(age)), int(job))
    return _Meta(
        movies, users, {w: i for i, w in enumerate(sorted(words))}, {c: i for i, c in enumerate(sorted(genres))}
    )


def _reader(rand_seed=0, test_ratio=0.1, is_test=False):
    meta = _meta()
    rng = np.random.RandomState(rand_seed)  # Paddle's np.random.seed(rand_seed) draw per line
    with _package() as package:
        for line in _lines(package, "ratings"):
            if (rng.random_sample() < test_ratio) == is_test:
                uid, movie_id, rating, _ = line.split("::")
                yield (
                    meta.users[int(uid)].value() + meta.movies[int(movie_id)].value(meta) + [[float(rating) * 2 - 5.0]]
                )


def train(rand_seed=0, test_ratio=0.1):
    return lambda: _reader(rand_seed, test_ratio, is_test=False)


def test(rand_seed=0, test_ratio=0.1):
    return lambda: _reader(rand_seed, test_ratio, is_test=True)


def get_movie_title_dict() -> dict[str, int]:
    return _meta().titles


def movie_categories() -> dict[str, int]:
    return _meta().categories


def max_movie_id() -> int:
    return max(_meta().movies)


def max_user_id() -> int:
    return max(_meta().users)


def max_job_id() -> int:
    return max(u.job_id for u in _meta().users.values())


def user_info() -> dict[int, UserInfo]:
    return _meta().users


def movie_info() -> dict[int, MovieInfo]:
    return _meta().movies
