import Foundation
@testable import ImageService
import Testing
import TestSupport

@Suite("Service: CPU admission")
struct CPUAdmissionTests {
    /// Starts `admit(memory:)` in a task and waits until it is queued (or admitted).
    private func enqueue(
        _ admission: CPUAdmission, memory: Int, order: Recorder, name: String,
        expectWaiting: Int
    ) async throws -> Task<Result<Bool, CPUAdmission.Refusal>, Never> {
        let task = Task { () -> Result<Bool, CPUAdmission.Refusal> in
            do throws(CPUAdmission.Refusal) {
                try await admission.admit(memory: memory)
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
        let admission = CPUAdmission(workers: 1, queueLimit: 10, memoryBudget: 1 << 30)
        try await admission.admit(memory: 1)
        let order = Recorder()
        var tasks: [Task<Result<Bool, CPUAdmission.Refusal>, Never>] = []
        for index in 0..<5 { tasks.append(try await enqueue(admission, memory: 1, order: order, name: "\(index)", expectWaiting: index + 1)) }
        for expected in 0..<5 {
            admission.release(memory: 1)
            // Waits for whoever is admitted (not for task `expected`: a wrong order must fail, not hang).
            _ = await pollUntil { order.names.count >= expected + 1 }
            #expect(order.names.last == "\(expected)")
        }
        for task in tasks { #expect(try await task.value.get()) }
        #expect(order.names == ["0", "1", "2", "3", "4"])
        admission.release(memory: 1)
        #expect(admission.snapshot == .init(busy: 0, waiting: 0, memoryInUse: 0))
    }

    @Test("beyond the queue limit work is refused at once, and the admission reports itself saturated")
    func queueFull() async throws {
        let admission = CPUAdmission(workers: 1, queueLimit: 2, memoryBudget: 1 << 30)
        #expect(!admission.isSaturated)
        try await admission.admit(memory: 1)
        let order = Recorder()
        let first = try await enqueue(admission, memory: 1, order: order, name: "a", expectWaiting: 1)
        #expect(!admission.isSaturated)
        let second = try await enqueue(admission, memory: 1, order: order, name: "b", expectWaiting: 2)
        #expect(admission.isSaturated)
        await #expect(throws: CPUAdmission.Refusal.queueFull) { try await admission.admit(memory: 1) }
        admission.release(memory: 1)
        _ = await first.value
        #expect(!admission.isSaturated)
        admission.release(memory: 1)
        _ = await second.value
        admission.release(memory: 1)
    }

    @Test("the memory budget holds back work that would not fit beside what runs; work alone always runs")
    func memoryBudget() async throws {
        let admission = CPUAdmission(workers: 4, queueLimit: 10, memoryBudget: 100)
        try await admission.admit(memory: 60)
        let order = Recorder()
        let big = try await enqueue(admission, memory: 60, order: order, name: "big", expectWaiting: 1)
        // A small one behind it waits too: strictly in order, so the big one is not starved.
        let small = try await enqueue(admission, memory: 10, order: order, name: "small", expectWaiting: 2)
        #expect(admission.snapshot.busy == 1 && order.names.isEmpty)
        admission.release(memory: 60)
        _ = await big.value
        _ = await small.value
        #expect(order.names == ["big", "small"] && admission.snapshot.memoryInUse == 70)
        admission.release(memory: 60)
        admission.release(memory: 10)
        // Over the whole budget, alone: runs.
        try await admission.admit(memory: 500)
        #expect(admission.snapshot.busy == 1)
        admission.release(memory: 500)
    }

    @Test("a cancelled waiter leaves the queue at once and whoever it held back is admitted")
    func cancellation() async throws {
        let admission = CPUAdmission(workers: 2, queueLimit: 10, memoryBudget: 100)
        try await admission.admit(memory: 50)
        let order = Recorder()
        let blocked = try await enqueue(admission, memory: 80, order: order, name: "blocked", expectWaiting: 1)
        let behind = try await enqueue(admission, memory: 20, order: order, name: "behind", expectWaiting: 2)
        blocked.cancel()
        #expect(await blocked.value == .failure(.cancelled))
        _ = await behind.value
        #expect(order.names == ["behind"] && admission.snapshot == .init(busy: 2, waiting: 0, memoryInUse: 70))
        // A task cancelled before it asks is refused without queueing.
        let early = Task { () -> Result<Bool, CPUAdmission.Refusal> in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(CPUAdmission.Refusal) { try await admission.admit(memory: 1) } catch { return .failure(error) }
            return .success(true)
        }
        #expect(await early.value == .failure(.cancelled))
        #expect(admission.snapshot.waiting == 0)
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
