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

    @Test("zones are registrable domains from the Public Suffix List: N.xy.cc is one zone, not one per N")
    func zones() throws {
        let pool = LookupPool(lookUp: { _ in [] })
        #expect(pool.suffixes.count > 5000, "the system's list (Debian's publicsuffix) was read: \(pool.suffixes.count) rules")
        #expect(pool.zone(of: "a.b.example.com") == "example.com")
        #expect(pool.zone(of: "img.shop.example.co.uk") == "example.co.uk")
        #expect(pool.zone(of: "cdn.example.de") == "example.de")
        #expect(pool.zone(of: "localhost") == "localhost")
        // The rule of thumb took three labels under any two-letter top level: a zone per N.
        #expect(Set((0..<16).map { pool.zone(of: "n\($0).xy.cc") }) == ["xy.cc"])
        // Names anyone registers under are suffixes: each user's site is a zone of its own.
        #expect(pool.zone(of: "a.alice.github.io") == "alice.github.io" && pool.zone(of: "bob.github.io") == "bob.github.io")
        // Wildcards match one label; exceptions win; case is folded; addresses are themselves.
        let list = PublicSuffixList(text: "// comment\ncom\n*.ck\n!www.ck\nco.uk\n")
        #expect(list.registrableDomain(of: "a.b.foo.ck") == "b.foo.ck" && list.registrableDomain(of: "x.www.ck") == "www.ck")
        #expect(list.registrableDomain(of: "IMG.Example.CO.UK") == "example.co.uk" && list.registrableDomain(of: "unlisted.zz") == "unlisted.zz")
        #expect(list.registrableDomain(of: "10.0.0.1") == "10.0.0.1" && list.registrableDomain(of: "co.uk") == "co.uk")
    }

    @Test("16 names of one domain take at most their zone's share: every other name is still looked up")
    func oneDomainManyNames() async throws {
        let resolver = Resolver()
        let pool = LookupPool(limits: .init(slots: 16, perZone: 4), lookUp: resolver.lookUp)
        // Two-letter top level and a short second level: the old rule made each its own zone.
        let stuck = (0..<16).map { index in Task { try await pool.addresses(of: "n\(index).xy.blackhole.test") } }
        #expect(await pollUntil { pool.snapshot == .init(running: 4, waiting: 12) }, "\(pool.snapshot)")
        let answer = await withDeadline(.seconds(10), late: [IPAddress]?.none) { try? await pool.addresses(of: "images.example.com") }
        #expect(answer == [.v4(0x0A00_0001)])
        resolver.open()
        for task in stuck { #expect(try await task.value == [.v4(0x0A00_0001)]) }
    }

    @Test("names never seen take at most half the slots: a name that resolved before is refreshed while new ones hang")
    func unseenNamesHalf() async throws {
        let resolver = Resolver()
        let limits = LookupPool.Limits(slots: 4, perZone: 4, positiveLifetime: .zero, staleLifetime: .zero)
        let pool = LookupPool(limits: limits, lookUp: resolver.lookUp)
        // Seen once (answered at once), then expired: its next lookup is a known name's.
        #expect(try await pool.addresses(of: "known.example.com") == [.v4(0x0A00_0001)])
        let flood = (0..<6).map { index in Task { try await pool.addresses(of: "new\(index).blackhole.test") } }
        #expect(await pollUntil { pool.snapshot == .init(running: 2, waiting: 4) }, "\(pool.snapshot)")
        let known = await withDeadline(.seconds(10), late: [IPAddress]?.none) { try? await pool.addresses(of: "known.example.com") }
        #expect(known == [.v4(0x0A00_0001)] && resolver.lookups(of: "known.example.com") == 2)
        resolver.open()
        for task in flood { #expect(try await task.value == [.v4(0x0A00_0001)]) }
    }

    @Test("a name's last good answer is served at once while its refresh hangs; without a stale lifetime callers wait for it")
    func staleWhileRefreshing() async throws {
        for staleLifetime in [Duration.seconds(600), .zero] {
            // The first lookup of a name answers at once; every later one (the refresh) hangs.
            let first = Resolver()
            let refresh = Resolver()
            let limits = LookupPool.Limits(slots: 4, perZone: 4, positiveLifetime: .zero, staleLifetime: staleLifetime)
            let pool = LookupPool(limits: limits) { host in
                first.lookups(of: host) == 0 ? first.lookUp(host) : refresh.lookUp(host + ".blackhole.test")
            }
            #expect(try await pool.addresses(of: "a.example.com") == [.v4(0x0A00_0001)])
            // Expired at once (lifetime zero).
            let again = Task { try await pool.addresses(of: "a.example.com") }
            #expect(await pollUntil { pool.snapshot.running == 1 }, "a refresh runs")
            if staleLifetime > .zero {
                let stale = await withDeadline(.seconds(10), late: [IPAddress]?.none) { try? await again.value }
                #expect(stale == [.v4(0x0A00_0001)], "the stale answer, at once")
                let more = await withDeadline(.seconds(10), late: [IPAddress]?.none) { try? await pool.addresses(of: "a.example.com") }
                #expect(more == [.v4(0x0A00_0001)] && pool.snapshot == .init(running: 1, waiting: 0), "one refresh at a time")
                refresh.open()
            } else {
                // Nothing to serve meanwhile: the caller waits for the refresh.
                #expect(await pollUntil { pool.snapshot.running == 1 && refresh.lookups(of: "a.example.com.blackhole.test") == 1 })
                refresh.open()
                #expect(try await again.value == [.v4(0x0A00_0001)])
            }
            #expect(await pollUntil { pool.snapshot.running == 0 })
        }
    }

    @Test("a caller cancelled before it is registered is answered at once, not after the lookup")
    func cancelledBeforeRegistering() async throws {
        let resolver = Resolver()
        let pool = LookupPool(limits: .init(slots: 1, perZone: 1), lookUp: resolver.lookUp)
        let early = Task { () -> Result<[IPAddress], DataLoadingError> in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(DataLoadingError) { return .success(try await pool.addresses(of: "x.blackhole.test")) } catch { return .failure(error) }
        }
        let outcome = await withDeadline(.seconds(10), late: Result<[IPAddress], DataLoadingError>.failure(.timedOut)) { await early.value }
        #expect(outcome == .failure(.cancelled))
        #expect(pool.snapshot == .init(running: 0, waiting: 0) && resolver.lookups(of: "x.blackhole.test") == 0)
        resolver.open()
    }
}
