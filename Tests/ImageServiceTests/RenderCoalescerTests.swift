import Foundation
@testable import ImageService
import Testing
import TestSupport

@Suite("Service: render coalescing")
struct RenderCoalescerTests {
    @Test("requests for one key while its work runs share one run; a later request runs again")
    func sharing() async throws {
        let coalescer = RenderCoalescer<Int>()
        let gate = Gate()
        let runs = Recorder()
        let joins = Recorder()
        let waiters = (0..<10).map { _ in
            Task {
                await coalescer.result(for: "k", onJoin: { joins.append("join") }) {
                    runs.append("run")
                    await gate.pass()
                    return .success(42)
                }
            }
        }
        #expect(await gate.waitForArrivals(1))
        _ = await pollUntil { joins.names.count >= 9 }
        gate.open()
        for waiter in waiters { #expect(try await waiter.value.get() == 42) }
        #expect(runs.names.count == 1 && joins.names.count == 9 && coalescer.count == 0)
        _ = await coalescer.result(for: "k") {
            runs.append("run")
            return .success(1)
        }
        #expect(runs.names.count == 2)
    }

    @Test("a waiter that is cancelled gets .cancelled at once; the others still get the result")
    func oneLeaves() async throws {
        let coalescer = RenderCoalescer<Int>()
        let gate = Gate()
        let joined = Recorder()
        let work: @Sendable () async -> Result<Int, ServiceError> = {
            await gate.pass()
            return .success(7)
        }
        let first = Task { await coalescer.result(for: "k", work: work) }
        #expect(await gate.waitForArrivals(1))
        let second = Task { await coalescer.result(for: "k", onJoin: { joined.append("x") }, work: work) }
        #expect(await pollUntil { !joined.names.isEmpty })
        second.cancel()
        #expect(await second.value == .failure(.cancelled))
        gate.open()
        #expect(await first.value == .success(7))
    }

    @Test("when the last waiter leaves, the work itself is cancelled")
    func lastLeaves() async throws {
        let coalescer = RenderCoalescer<Int>()
        let sawCancellation = Recorder()
        let started = Gate()
        started.open() // counts arrivals only
        let waiter = Task {
            await coalescer.result(for: "k") {
                await started.pass()
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(1)) }
                sawCancellation.append("cancelled")
                return .success(0)
            }
        }
        #expect(await started.waitForArrivals(1))
        waiter.cancel()
        #expect(await waiter.value == .failure(.cancelled))
        _ = await pollUntil { !sawCancellation.names.isEmpty }
        #expect(sawCancellation.names == ["cancelled"] && coalescer.count == 0)
    }
}
