import Foundation
import ImageCodec
@testable import ImageService
import Testing
import TestSupport

@Suite("Service: CPU and download admission")
struct CPUAdmissionTests {
    /// Starts `admit()` in a task and waits until it is queued (or admitted).
    private func enqueue(
        _ admission: CPUAdmission, order: Recorder, name: String, expectWaiting: Int
    ) async throws -> Task<Result<Bool, CPUAdmission.Refusal>, Never> {
        let task = Task { () -> Result<Bool, CPUAdmission.Refusal> in
            do throws(CPUAdmission.Refusal) {
                try await admission.admit(MemoryLedger(budget: admission.memory))
                order.append(name)
                return .success(true)
            } catch {
                return .failure(error)
            }
        }
        _ = await pollUntil { admission.snapshot.waiting >= expectWaiting }
        try #require(admission.snapshot.waiting == expectWaiting)
        return task
    }

    @Test("work waits for a free worker and is admitted first come, first served")
    func fifo() async throws {
        let admission = CPUAdmission(workers: 1, queueLimit: 10)
        let ledger = MemoryLedger(budget: admission.memory)
        try await admission.admit(ledger)
        let order = Recorder()
        var tasks: [Task<Result<Bool, CPUAdmission.Refusal>, Never>] = []
        for index in 0..<5 { tasks.append(try await enqueue(admission, order: order, name: "\(index)", expectWaiting: index + 1)) }
        for expected in 0..<5 {
            admission.release(ledger)
            // Waits for whoever is admitted (not for task `expected`: a wrong order must fail, not hang).
            _ = await pollUntil { order.names.count >= expected + 1 }
            #expect(order.names.last == "\(expected)")
        }
        for task in tasks { #expect(try await task.value.get()) }
        #expect(order.names == ["0", "1", "2", "3", "4"])
        admission.release(ledger)
        #expect(admission.snapshot == .init(busy: 0, waiting: 0))
    }

    @Test("beyond the queue limit work is refused at once, and the admission reports itself saturated")
    func queueFull() async throws {
        let admission = CPUAdmission(workers: 1, queueLimit: 2)
        let ledger = MemoryLedger(budget: admission.memory)
        #expect(!admission.isSaturated)
        try await admission.admit(ledger)
        let order = Recorder()
        let first = try await enqueue(admission, order: order, name: "a", expectWaiting: 1)
        #expect(!admission.isSaturated)
        let second = try await enqueue(admission, order: order, name: "b", expectWaiting: 2)
        #expect(admission.isSaturated)
        await #expect(throws: CPUAdmission.Refusal.queueFull) { try await admission.admit(ledger) }
        admission.release(ledger)
        _ = await first.value
        #expect(!admission.isSaturated)
        admission.release(ledger)
        _ = await second.value
        admission.release(ledger)
        #expect(admission.snapshot == .init(busy: 0, waiting: 0))
    }

    @Test("a cancelled waiter leaves the queue at once; one cancelled before it asks is refused without queueing")
    func cancellation() async throws {
        let admission = CPUAdmission(workers: 1, queueLimit: 10)
        let ledger = MemoryLedger(budget: admission.memory)
        try await admission.admit(ledger)
        let order = Recorder()
        let cancelled = try await enqueue(admission, order: order, name: "cancelled", expectWaiting: 1)
        let behind = try await enqueue(admission, order: order, name: "behind", expectWaiting: 2)
        cancelled.cancel()
        #expect(await cancelled.value == .failure(.cancelled))
        #expect(admission.snapshot == .init(busy: 1, waiting: 1))
        admission.release(ledger)
        _ = await behind.value
        #expect(order.names == ["behind"] && admission.snapshot == .init(busy: 1, waiting: 0))
        let early = Task { () -> Result<Bool, CPUAdmission.Refusal> in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(CPUAdmission.Refusal) { try await admission.admit(ledger) } catch { return .failure(error) }
            return .success(true)
        }
        #expect(await early.value == .failure(.cancelled))
        #expect(admission.snapshot.waiting == 0)
    }

    /// `admit(_:reserving:)` running in a task of its own, with a ledger of its own.
    private struct Admitting {
        let task: Task<Result<Bool, CPUAdmission.Refusal>, Never>
        let ended: Recorder
        let ledger: MemoryLedger

        init(_ admission: CPUAdmission, _ bytes: Int) {
            let ended = Recorder()
            let ledger = MemoryLedger(budget: admission.memory)
            (self.ended, self.ledger) = (ended, ledger)
            task = Task {
                defer { ended.append("ended") }
                do throws(CPUAdmission.Refusal) { try await admission.admit(ledger, reserving: bytes) } catch { return .failure(error) }
                return .success(true)
            }
        }

        /// How it ended; one that has not ended by the hang guard is cancelled (and so answers
        /// `.cancelled`): a waiter stranded by a bug fails the test instead of hanging it.
        var outcome: Result<Bool, CPUAdmission.Refusal> {
            get async {
                if !(await pollUntil { !ended.names.isEmpty }) { task.cancel() }
                return await task.value
            }
        }
    }

    @Test("a render whose bytes do not fit waits while another runs, and is admitted with them when that one ends")
    func waitsForMemory() async throws {
        let memory = MemoryBudget(capacity: 100)
        let admission = CPUAdmission(workers: 2, queueLimit: 4, memory: memory)
        let first = MemoryLedger(budget: memory)
        try await admission.admit(first, reserving: 80)
        // A worker is free, the memory is not: it waits instead of being refused.
        let second = Admitting(admission, 50)
        #expect(await pollUntil { admission.snapshot.waiting == 1 || !second.ended.names.isEmpty })
        #expect(admission.snapshot == .init(busy: 1, waiting: 1) && memory.bytesInUse == 80)
        admission.release(first)
        #expect(await second.outcome == .success(true))
        #expect(admission.snapshot == .init(busy: 1, waiting: 0) && memory.bytesInUse == 50 && second.ledger.bytesPrepaid == 50)
        admission.release(second.ledger)
        #expect(memory.bytesInUse == 0)
    }

    @Test("with no render running, a render waits for memory others give back (an answer written, a source dropped)")
    func memoryFromElsewhere() async throws {
        let memory = MemoryBudget(capacity: 100)
        // A wait longer than the test: only a release can admit it.
        let admission = CPUAdmission(workers: 2, queueLimit: 4, memory: memory, memoryWait: .seconds(600))
        // An answer being written holds the budget; nothing this queue runs would free it.
        let answer = MemoryLedger(budget: memory)
        var body: MemoryCharge? = try answer.charge(60)
        let waiting = Admitting(admission, 50)
        #expect(await pollUntil { admission.snapshot.waiting == 1 })
        #expect(memory.bytesInUse == 60 && body?.bytes == 60)
        body = nil // the answer's last byte is written
        #expect(await waiting.outcome == .success(true))
        #expect(memory.bytesInUse == 50)
        admission.release(waiting.ledger)
        #expect(memory.bytesInUse == 0)
    }

    @Test("with no render running and no memory coming back, the oldest waiter alone is refused after the wait, then the next")
    func memoryFullWithNothingRunning() async throws {
        let memory = MemoryBudget(capacity: 100)
        let admission = CPUAdmission(workers: 2, queueLimit: 4, memory: memory, memoryWait: .milliseconds(300))
        // Sources hold the budget; nothing this queue admits would give it back.
        #expect(memory.reserve(60))
        let oldest = Admitting(admission, 50)
        #expect(await pollUntil { admission.snapshot.waiting == 1 })
        let next = Admitting(admission, 45)
        #expect(await pollUntil { admission.snapshot.waiting == 2 })
        #expect(await oldest.outcome == .failure(.memoryFull))
        // Not every waiter at once: the next one has a wait of its own from here.
        #expect(next.ended.names.isEmpty && admission.snapshot.waiting == 1, "the next waiter was refused with the oldest")
        #expect(await next.outcome == .failure(.memoryFull))
        // The last running render ends and the head still does not fit: refused after its wait,
        // not stranded.
        let running = MemoryLedger(budget: memory)
        try await admission.admit(running, reserving: 30)
        let stranded = Admitting(admission, 50)
        #expect(await pollUntil { admission.snapshot.waiting == 1 })
        admission.release(running)
        #expect(await stranded.outcome == .failure(.memoryFull))
        #expect(admission.snapshot == .init(busy: 0, waiting: 0) && memory.bytesInUse == 60)
    }

    @Test("first come, first served for memory too; a waiter that leaves lets the one behind it in")
    func memoryOrder() async throws {
        let memory = MemoryBudget(capacity: 100)
        let admission = CPUAdmission(workers: 3, queueLimit: 4, memory: memory)
        let first = MemoryLedger(budget: memory)
        try await admission.admit(first, reserving: 80)
        let large = Admitting(admission, 50)
        #expect(await pollUntil { admission.snapshot.waiting == 1 })
        // It would fit, but it came later: it does not pass the large one by (no starvation).
        let small = Admitting(admission, 10)
        #expect(await pollUntil { admission.snapshot.waiting == 2 })
        large.task.cancel()
        #expect(await large.outcome == .failure(.cancelled))
        #expect(await small.outcome == .success(true))
        #expect(admission.snapshot == .init(busy: 2, waiting: 0) && memory.bytesInUse == 90)
        admission.release(small.ledger)
        admission.release(first)
        #expect(memory.bytesInUse == 0)
    }

    @Test("downloads: per host and in all, waiters from a busy host do not hold back another host, the queue is bounded")
    func downloads() async throws {
        let admission = DownloadAdmission(maximum: 3, perHost: 2, queueLimit: 2)
        try await admission.admit(host: "slow")
        try await admission.admit(host: "slow")
        // A third for the slow host waits; one for another host passes it by.
        let waiting = Task { () -> Result<Void, DownloadAdmission.Refusal> in
            do throws(DownloadAdmission.Refusal) { try await admission.admit(host: "slow") } catch { return .failure(error) }
            return .success(())
        }
        #expect(await pollUntil { admission.snapshot.waiting == 1 })
        try await admission.admit(host: "fast")
        #expect(admission.snapshot == .init(running: 3, waiting: 1))
        // All slots taken: one more waits, the next is refused.
        let queued = Task { () -> Result<Void, DownloadAdmission.Refusal> in
            do throws(DownloadAdmission.Refusal) { try await admission.admit(host: "other") } catch { return .failure(error) }
            return .success(())
        }
        #expect(await pollUntil { admission.snapshot.waiting == 2 })
        #expect(admission.isSaturated)
        await #expect(throws: DownloadAdmission.Refusal.queueFull) { try await admission.admit(host: "third") }
        // The fast host's slot frees: "other" can run, the slow host's waiter still cannot.
        admission.release(host: "fast")
        #expect(try await queued.value.get() == ())
        #expect(admission.snapshot == .init(running: 3, waiting: 1))
        admission.release(host: "slow")
        #expect(try await waiting.value.get() == ())
        for host in ["slow", "slow", "other"] { admission.release(host: host) }
        #expect(admission.snapshot == .init(running: 0, waiting: 0))
    }
}

/// Names in the order they were appended, from any task.
final class Recorder: @unchecked Sendable {
    // @unchecked: `list` is only touched while `lock` is held.
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ name: String) { lock.withLock { list.append(name) } }
    var names: [String] { lock.withLock { list } }
}
