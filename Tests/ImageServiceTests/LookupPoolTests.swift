import Foundation
import ImagePipeline
@testable import ImageService
import Locking
import Testing
import TestSupport

/// The DNS lookup pool, with a lookup function the test controls: names under
/// `blackhole.test` block until the test opens their gate (a resolver that never answers),
/// others answer at once.
@Suite("Service: DNS lookups", .timeLimit(.minutes(1)))
struct LookupPoolTests {
    /// Counts lookups by name and holds black-holed ones until `open()`.
    final class Resolver: @unchecked Sendable {
        private let lock = Lock()
        private var counts: [String: Int] = [:]
        private let gate = DispatchSemaphore(value: 0)
        private var opened = false

        func lookUp(_ host: String) -> [IPAddress] {
            lock.withLock { counts[host, default: 0] += 1 }
            if host.hasSuffix("blackhole.test") {
                gate.wait()
                gate.signal()
            }
            return host.hasPrefix("dead.") ? [] : [.v4(0x0A00_0001)]
        }

        func open() {
            let first = lock.withLock { () -> Bool in
                defer { opened = true }
                return !opened
            }
            if first { gate.signal() }
        }

        func lookups(of host: String) -> Int { lock.withLock { counts[host, default: 0] } }
    }

    @Test("a black-holed zone holds at most its share of the slots: another name is answered while 20 of its names hang")
    func blackHoledZone() async throws {
        let resolver = Resolver()
        let pool = LookupPool(limits: .init(slots: 16, perZone: 4), lookUp: resolver.lookUp)
        let stuck = (0..<20).map { index in Task { try await pool.addresses(of: "n\(index).blackhole.test") } }
        #expect(await pollUntil { pool.snapshot == .init(running: 4, waiting: 16) }, "\(pool.snapshot)")
        // Answered while every black-holed lookup still hangs (without the zone's share, all 16
        // slots would be theirs and this would wait for them).
        let answer = await withDeadline(.seconds(10), late: [IPAddress]?.none) { try? await pool.addresses(of: "images.example.com") }
        #expect(answer == [.v4(0x0A00_0001)])
        resolver.open()
        for task in stuck { #expect(try await task.value == [.v4(0x0A00_0001)]) }
        #expect(pool.snapshot == .init(running: 0, waiting: 0))
    }

    @Test("one name is looked up once for every caller at once, then served from the cache; an empty answer is cached too")
    func coalescedAndCached() async throws {
        let resolver = Resolver()
        let pool = LookupPool(lookUp: resolver.lookUp)
        let callers = (0..<10).map { _ in Task { try await pool.addresses(of: "a.blackhole.test") } }
        #expect(await pollUntil { pool.snapshot.running == 1 })
        resolver.open()
        for caller in callers { #expect(try await caller.value == [.v4(0x0A00_0001)]) }
        #expect(try await pool.addresses(of: "a.blackhole.test") == [.v4(0x0A00_0001)])
        #expect(resolver.lookups(of: "a.blackhole.test") == 1)
        let dead = try await pool.addresses(of: "dead.example.com")
        let deadAgain = try await pool.addresses(of: "dead.example.com")
        #expect(dead.isEmpty && deadAgain.isEmpty)
        #expect(resolver.lookups(of: "dead.example.com") == 1)
    }

    @Test("a cancelled caller returns at once; a queued name nobody waits for any more is never looked up")
    func cancellation() async throws {
        let resolver = Resolver()
        let pool = LookupPool(limits: .init(slots: 1, perZone: 1), lookUp: resolver.lookUp)
        let running = Task { try await pool.addresses(of: "first.blackhole.test") }
        #expect(await pollUntil { pool.snapshot.running == 1 })
        let queued = Task { try await pool.addresses(of: "second.blackhole.test") }
        #expect(await pollUntil { pool.snapshot.waiting == 1 })
        queued.cancel()
        running.cancel()
        await #expect(throws: DataLoadingError.cancelled) { try await queued.value }
        await #expect(throws: DataLoadingError.cancelled) { try await running.value }
        #expect(pool.snapshot.waiting == 0)
        resolver.open()
        #expect(await pollUntil { pool.snapshot.running == 0 })
        #expect(resolver.lookups(of: "second.blackhole.test") == 0)
    }

    @Test("zones: the last two labels, three under a two-letter country code's short second level")
    func zones() {
        #expect(LookupPool.zone(of: "a.b.example.com") == "example.com")
        #expect(LookupPool.zone(of: "img.shop.example.co.uk") == "example.co.uk")
        #expect(LookupPool.zone(of: "cdn.example.de") == "example.de")
        #expect(LookupPool.zone(of: "localhost") == "localhost")
    }
}
