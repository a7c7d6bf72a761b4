import Foundation
import Testing
import TestSupport
@testable import ImageCache

@Suite("Memory cache")
struct MemoryCacheTests {
    @Test("evicts strictly least recently used, and reads count as use")
    func lruOrder() {
        let cache = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(costLimit: 1000, countLimit: 3))
        cache.setValue(1, forKey: "a", cost: 1)
        cache.setValue(2, forKey: "b", cost: 1)
        cache.setValue(3, forKey: "c", cost: 1)
        #expect(cache.value(forKey: "a") == 1) // a is now most recent; b is least
        cache.setValue(4, forKey: "d", cost: 1)
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.value(forKey: "a") == 1 && cache.value(forKey: "c") == 3 && cache.value(forKey: "d") == 4)
        cache.setValue(5, forKey: "e", cost: 1) // a, c, d were read in that order: a is least recent
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.statistics.evictions == 2 && cache.statistics.count == 3)
    }

    @Test("with minimumUses 2 a key is stored at its second offer, replaced at once after, and forgotten when its slot is taken")
    func secondUse() {
        let cache = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(costLimit: 1000, minimumUses: 2))
        #expect(!cache.setValue(1, forKey: "a", cost: 5), "the first offer is only remembered")
        #expect(cache.value(forKey: "a") == nil && cache.statistics.count == 0 && cache.statistics.totalCost == 0)
        #expect(!cache.replaceValue(1, forKey: "a", cost: 5) { _ in true }, "a refresh is not an offer: nothing to replace")
        #expect(cache.setValue(2, forKey: "a", cost: 5), "the second offer stores it")
        #expect(cache.value(forKey: "a") == 2 && cache.statistics.totalCost == 5)
        #expect(cache.setValue(3, forKey: "a", cost: 6), "a stored key is replaced at once")
        #expect(cache.value(forKey: "a") == 3 && cache.statistics.totalCost == 6)
        #expect(cache.replaceValue(4, forKey: "a", cost: 6) { $0 == 3 })
        // Offers are counted per key: another key's first offer stores nothing.
        #expect(!cache.setValue(9, forKey: "b", cost: 1) && cache.value(forKey: "b") == nil)
        // A key whose slot another key took (same shard, same slot) starts over.
        let shards = cache.shards.count
        let slot = { (key: String) in (key.hashValue & (shards - 1), (key.hashValue >> 8) & (MemoryCacheShard<String, Int>.offerSlots - 1)) }
        let first = "c"
        let rival = (0...).lazy.map { "rival-\($0)" }.first { slot($0) == slot(first) }!
        #expect(!cache.setValue(1, forKey: first, cost: 1))
        #expect(!cache.setValue(1, forKey: rival, cost: 1), "the rival's first offer takes the slot")
        #expect(!cache.setValue(1, forKey: first, cost: 1), "so this is the first offer again")
        #expect(cache.setValue(1, forKey: first, cost: 1) && cache.value(forKey: first) == 1)
        // 1 (the default) stores at once; out-of-range values are clamped.
        #expect(MemoryCache<String, Int>().setValue(1, forKey: "a", cost: 1))
        #expect(MemoryCacheConfiguration(minimumUses: 0).minimumUses == 1 && MemoryCacheConfiguration(minimumUses: 900).minimumUses == 255)
        let three = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(costLimit: 100, minimumUses: 3))
        #expect(!three.setValue(1, forKey: "a", cost: 1) && !three.setValue(1, forKey: "a", cost: 1) && three.setValue(1, forKey: "a", cost: 1))
    }

    @Test("replaceValue is a compare-and-set: only over a present value the predicate accepts, with its cost")
    func compareAndSet() {
        let cache = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(costLimit: 1000, countLimit: 10))
        #expect(!cache.replaceValue(1, forKey: "a", cost: 5) { _ in true }, "nothing to replace: a removed entry is not brought back")
        #expect(cache.value(forKey: "a") == nil)
        cache.setValue(1, forKey: "a", cost: 5)
        #expect(!cache.replaceValue(2, forKey: "a", cost: 7) { $0 == 99 })
        #expect(cache.value(forKey: "a") == 1 && cache.statistics.totalCost == 5)
        #expect(cache.replaceValue(3, forKey: "a", cost: 7) { $0 == 1 })
        #expect(cache.value(forKey: "a") == 3 && cache.statistics.totalCost == 7 && cache.statistics.count == 1)
    }

    @Test("removeValues(where:) removes exactly the keys it picks, in every shard, and their cost and count")
    func removeWhere() {
        let cache = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(costLimit: 100_000, countLimit: 1000))
        for index in 0..<200 { cache.setValue(index, forKey: "\(index % 2 == 0 ? "a" : "b")/\(index)", cost: 10) }
        cache.removeValues { $0.hasPrefix("a/") }
        #expect(cache.statistics.count == 100 && cache.statistics.totalCost == 1000)
        #expect((0..<200).allSatisfy { (cache.value(forKey: "\($0 % 2 == 0 ? "a" : "b")/\($0)") != nil) == ($0 % 2 == 1) })
    }

    @Test("the cost limit holds after every insert; replacing updates the cost")
    func costLimit() {
        let cache = MemoryCache<Int, String>(configuration: MemoryCacheConfiguration(costLimit: 100, maximumEntryCostFraction: 1))
        for key in 0..<10 { cache.setValue("v\(key)", forKey: key, cost: 30) }
        #expect(cache.statistics.totalCost == 90 && cache.statistics.count == 3)
        #expect((7...9).allSatisfy { cache.value(forKey: $0) != nil })
        cache.setValue("big", forKey: 9, cost: 60) // replace: 30 + 30 + 60 > 100 → evict 7
        #expect(cache.statistics.totalCost == 90)
        #expect(cache.value(forKey: 7) == nil && cache.value(forKey: 9) == "big")
    }

    @Test("an entry above the allowed fraction of the limit is refused: false, nothing else evicted, the old version dropped")
    func oversizedEntry() {
        let cache = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(costLimit: 100, maximumEntryCostFraction: 0.25))
        #expect(cache.setValue(1, forKey: "small", cost: 25))
        #expect(cache.setValue(2, forKey: "other", cost: 20))
        #expect(!cache.setValue(3, forKey: "small", cost: 26))
        #expect(cache.value(forKey: "small") == nil)
        #expect(cache.value(forKey: "other") == 2)
        #expect(cache.statistics.totalCost == 20 && cache.statistics.evictions == 0)
        // A fraction above 1 cannot make an entry larger than the whole limit acceptable.
        let loose = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(costLimit: 100, maximumEntryCostFraction: 5))
        #expect(loose.setValue(1, forKey: "a", cost: 60))
        #expect(!loose.setValue(2, forKey: "b", cost: 101))
        #expect(loose.value(forKey: "a") == 1)
    }

    @Test("replaced, evicted and removed values are released outside the lock (a deinit that uses the cache does not deadlock)")
    func releaseOutsideLock() async throws {
        final class Reentrant: Sendable {
            let cache: MemoryCache<String, Reentrant>?
            init(_ cache: MemoryCache<String, Reentrant>?) { self.cache = cache }
            deinit { _ = cache?.value(forKey: "probe"); _ = cache?.statistics }
        }
        let cache = MemoryCache<String, Reentrant>(configuration: MemoryCacheConfiguration(costLimit: 10, countLimit: 2, maximumEntryCostFraction: 1))
        try await withTimeout(seconds: 10) {
            cache.setValue(Reentrant(cache), forKey: "a", cost: 1)
            cache.setValue(Reentrant(cache), forKey: "a", cost: 1) // replaces
            cache.setValue(Reentrant(cache), forKey: "b", cost: 1)
            cache.setValue(Reentrant(cache), forKey: "c", cost: 1) // evicts
            cache.removeValue(forKey: "b")
            cache.trim(toCost: 0)
            cache.removeAll()
        }
        #expect(cache.statistics.count == 0)
    }

    @Test("time to live, per entry and by default, with an injected clock")
    func timeToLive() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(configuration: MemoryCacheConfiguration(defaultTimeToLive: 60), clock: clock)
        cache.setValue(1, forKey: "default", cost: 1)
        cache.setValue(2, forKey: "short", cost: 1, timeToLive: 10)
        clock.advance(by: 9.9)
        #expect(cache.value(forKey: "short") == 2)
        clock.advance(by: 0.2)
        #expect(cache.value(forKey: "short") == nil)
        #expect(cache.value(forKey: "default") == 1)
        clock.advance(by: 50)
        #expect(cache.value(forKey: "default") == nil)
        #expect(cache.statistics.count == 0)
    }

    @Test("remove, removeAll, trim and statistics")
    func removalAndStatistics() {
        let cache = MemoryCache<Int, Int>(configuration: MemoryCacheConfiguration(costLimit: 1000, maximumEntryCostFraction: 1))
        for key in 0..<10 { cache.setValue(key, forKey: key, cost: 10) }
        #expect(cache.removeValue(forKey: 3) == 3)
        #expect(cache.value(forKey: 3) == nil)
        _ = cache.value(forKey: 0) // 0 becomes most recent
        cache.trim(toCost: 30)
        #expect(cache.statistics.count == 3)
        #expect(cache.value(forKey: 0) == 0 && cache.value(forKey: 9) == 9 && cache.value(forKey: 8) == 8)
        let statistics = cache.statistics
        #expect(statistics.hits == 4 && statistics.misses == 1 && statistics.totalCost == 30)
        cache.removeAll()
        #expect(cache.statistics.count == 0 && cache.statistics.totalCost == 0)
        #expect(cache.value(forKey: 0) == nil)
    }

    @Test("the default cost limit is 15% of memory, at most 512 MiB")
    func defaultLimit() throws {
        // Read /proc/meminfo independently of ProcessInfo, which the implementation uses.
        let meminfo = try String(contentsOfFile: "/proc/meminfo", encoding: .utf8)
        let line = try #require(meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") })
        let kibibytes = try #require(Int(line.split(separator: " ")[1]))
        let expected = min(kibibytes * 1024 * 15 / 100, 512 << 20)
        #expect(abs(MemoryCacheConfiguration.defaultCostLimit - expected) <= 1024)
    }

    @Test("a random workload matches a reference model of one LRU list, with one shard and with many", arguments: [1, 16])
    func modelCheck(shards: Int) {
        var generator = SeededGenerator()
        let cache = MemoryCache<Int, Int>(
            configuration: MemoryCacheConfiguration(costLimit: 200, countLimit: 12, maximumEntryCostFraction: 1),
            clock: SystemClock(), shardCount: shards)
        var model: [(key: Int, value: Int, cost: Int)] = [] // most recent last
        for step in 0..<5000 {
            let key = Int.random(in: 0..<30, using: &generator)
            if Bool.random(using: &generator) {
                let cost = Int.random(in: 1...40, using: &generator)
                cache.setValue(step, forKey: key, cost: cost)
                model.removeAll { $0.key == key }
                model.append((key, step, cost))
                while model.reduce(0, { $0 + $1.cost }) > 200 || model.count > 12 { model.removeFirst() }
            } else {
                let expected = model.first { $0.key == key }
                let actual = cache.value(forKey: key)
                #expect(actual == expected?.value, "step \(step), \(generator.replay)")
                if actual != expected?.value { return }
                if let index = model.firstIndex(where: { $0.key == key }) { model.append(model.remove(at: index)) }
            }
        }
        #expect(cache.statistics.count == model.count)
        #expect(cache.statistics.totalCost == model.reduce(0) { $0 + $1.cost })
    }
}

@Suite("Memory cache concurrency")
struct MemoryCacheConcurrencyTests {
    @Test("many tasks reading, writing and removing keep the limits and never tear values")
    func stress() async {
        let cache = MemoryCache<Int, [Int]>(configuration: MemoryCacheConfiguration(costLimit: 500, countLimit: 64, maximumEntryCostFraction: 1))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<5000 {
                        let key = (step * 7 + worker) % 100
                        switch step % 5 {
                        case 0, 1: cache.setValue([key, key, key], forKey: key, cost: 1 + key % 10)
                        case 4: cache.removeValue(forKey: key)
                        default:
                            if let value = cache.value(forKey: key) { #expect(value == [key, key, key]) }
                        }
                    }
                }
            }
        }
        let statistics = cache.statistics
        #expect(statistics.totalCost <= 500 && statistics.count <= 64)
        #expect(statistics.evictions > 0, "the test must exercise eviction")
        // The running totals that drive eviction agree with the shards' own accounting.
        #expect(cache.totals.lock.withLock { (cache.totals.cost, cache.totals.count) } == (statistics.totalCost, statistics.count))
        #expect(statistics.hits + statistics.misses == 8 * 2000)
    }
}
