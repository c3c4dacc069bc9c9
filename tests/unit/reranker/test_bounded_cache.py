"""The reranker's bounded cache (services/reranker/bounded_cache.py): at most `size` entries, the oldest added
dropped first, a hit refreshing nothing, and pop for erasure."""

from services.reranker.bounded_cache import BoundedCache


def test_the_oldest_added_entry_goes_first_once_the_bound_is_passed():
    cache: BoundedCache[int] = BoundedCache(3)
    for i, key in enumerate("abcd"):
        cache.put(key, i)
    assert len(cache) == 3
    assert "a" not in cache and cache.get("a") is None
    assert [cache.get(k) for k in "bcd"] == [1, 2, 3]


def test_a_hit_does_not_keep_an_entry_longer():
    cache: BoundedCache[int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # read, yet still the oldest added
    cache.put("c", 3)
    assert "a" not in cache and "b" in cache and "c" in cache


def test_pop_removes_one_entry_and_says_what_it_held():
    cache: BoundedCache[str] = BoundedCache(4)
    cache.put("a", "x")
    cache.put("b", "y")
    assert cache.pop("a") == "x"
    assert cache.pop("a") is None and cache.pop("never") is None
    assert len(cache) == 1 and "b" in cache


def test_a_cache_of_size_zero_keeps_nothing():
    cache: BoundedCache[int] = BoundedCache(0)
    cache.put("a", 1)
    assert len(cache) == 0 and cache.get("a") is None
