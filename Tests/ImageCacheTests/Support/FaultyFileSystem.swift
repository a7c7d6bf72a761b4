import Foundation
import ImageCache

/// Real file-system operations, except those the test tells it to fail with a given errno.
///
/// A failing write is realistic: it writes the first half of the bytes, then fails, as a disk
/// that fills up mid-write does, so "nothing half-written is ever read" is actually exercised.
final class FaultyFileSystem: CacheFileSystem, @unchecked Sendable {
    enum Operation: Hashable, Sendable {
        case write, read, rename, remove, append, list, mkdir, lock, sync
    }

    private let real = POSIXFileSystem()
    private let lock = NSLock()
    private var faults: [Operation: (code: Int32, matching: String?)] = [:]
    private var counts: [Operation: Int] = [:]
    private var gates: [Operation: (gate: Gate, matching: String)] = [:]

    /// Makes the next `operation` on a name containing `matching` stop after doing its real
    /// work (for a read: after reading; for a write: after writing) until the gate opens.
    func pause(after operation: Operation, matching: String) -> Gate {
        let gate = Gate()
        lock.withLock { gates[operation] = (gate, matching) }
        return gate
    }

    fileprivate func passGate(_ operation: Operation, _ path: String) {
        let gate = lock.withLock { () -> Gate? in
            guard let entry = gates[operation], path.contains(entry.matching) else { return nil }
            gates[operation] = nil
            return entry.gate
        }
        gate?.arriveAndWait()
    }

    /// Makes `operation` fail with `code`, on every name or only on names containing `matching`.
    func fail(_ operation: Operation, with code: Int32, matching: String? = nil) {
        lock.withLock { faults[operation] = (code, matching) }
    }

    func heal() { lock.withLock { faults.removeAll() } }

    /// How many times `operation` was attempted.
    func count(_ operation: Operation) -> Int { lock.withLock { counts[operation, default: 0] } }

    fileprivate func check(_ operation: Operation, _ path: String) throws(FileSystemError) {
        let fault = lock.withLock { () -> (code: Int32, matching: String?)? in
            counts[operation, default: 0] += 1
            return faults[operation]
        }
        if let fault, fault.matching.map(path.contains) ?? true {
            throw FileSystemError(operation: "\(operation)", path: path, code: fault.code)
        }
    }

    func openRoot(_ url: URL) throws(FileSystemError) -> any CacheDirectory {
        try check(.mkdir, url.path)
        return FaultyDirectory(real: try real.openRoot(url), owner: self)
    }
}

/// A real directory whose operations first ask the owner whether to fail.
final class FaultyDirectory: CacheDirectory, @unchecked Sendable {
    let real: any CacheDirectory
    let owner: FaultyFileSystem

    init(real: any CacheDirectory, owner: FaultyFileSystem) {
        self.real = real
        self.owner = owner
    }

    var path: String { real.path }

    private func pathOf(_ name: String) -> String { real.path + "/" + name }

    func subdirectory(_ name: String) throws(FileSystemError) -> any CacheDirectory {
        try owner.check(.mkdir, pathOf(name))
        return FaultyDirectory(real: try real.subdirectory(name), owner: owner)
    }

    func list() throws(FileSystemError) -> [CacheFileStatus] {
        try owner.check(.list, real.path)
        return try real.list()
    }

    func status(of name: String) throws(FileSystemError) -> CacheFileStatus? { try real.status(of: name) }

    func readFile(_ name: String, maximumSize: Int, memory: any ReadMemory) throws(FileSystemError) -> Data {
        try owner.check(.read, pathOf(name))
        let data = try real.readFile(name, maximumSize: maximumSize, memory: memory)
        owner.passGate(.read, pathOf(name))
        return data
    }

    func readPrefix(of name: String, count: Int) throws(FileSystemError) -> Data {
        try owner.check(.read, pathOf(name))
        return try real.readPrefix(of: name, count: count)
    }

    func createFile(_ name: String, contents parts: [Data], synchronize: Bool) throws(FileSystemError) {
        do {
            try owner.check(.write, pathOf(name))
        } catch {
            // Half the bytes reach the disk before the failure.
            let data = parts.reduce(Data(), +)
            try? real.createFile(name, contents: [data.prefix(data.count / 2)], synchronize: false)
            throw error
        }
        try real.createFile(name, contents: parts, synchronize: synchronize)
        if synchronize { try owner.check(.sync, pathOf(name)) }
        owner.passGate(.write, pathOf(name))
    }

    func move(_ name: String, to destination: any CacheDirectory, as newName: String) throws(FileSystemError) {
        try owner.check(.rename, destination.path + "/" + newName)
        try real.move(name, to: (destination as? FaultyDirectory)?.real ?? destination, as: newName)
    }

    func remove(_ name: String) throws(FileSystemError) {
        try owner.check(.remove, pathOf(name))
        try real.remove(name)
    }

    func openForAppending(_ name: String) throws(FileSystemError) -> any AppendingFile {
        FaultyAppendingFile(file: try real.openForAppending(name), owner: owner, path: pathOf(name))
    }

    func lockExclusively(_ name: String) throws(FileSystemError) -> any AnyObject & Sendable {
        try owner.check(.lock, pathOf(name))
        return try real.lockExclusively(name)
    }

    func synchronize() throws(FileSystemError) {
        try owner.check(.sync, real.path)
        try real.synchronize()
    }
}

final class FaultyAppendingFile: AppendingFile, @unchecked Sendable {
    let file: any AppendingFile
    let owner: FaultyFileSystem
    let path: String

    init(file: any AppendingFile, owner: FaultyFileSystem, path: String) {
        self.file = file
        self.owner = owner
        self.path = path
    }

    func append(_ data: Data) throws(FileSystemError) {
        try owner.check(.append, path)
        try file.append(data)
    }

    func synchronize() throws(FileSystemError) {
        try owner.check(.sync, path)
        try file.synchronize()
    }
}

/// Lets a test hold an operation in another thread at a known point, then let it go on.
final class Gate: @unchecked Sendable {
    private let reached = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// Called by the paused operation.
    fileprivate func arriveAndWait() {
        reached.signal()
        released.wait()
    }

    /// Waits (up to 10 s) until the operation is paused here; false if it never came.
    func waitUntilReached() -> Bool { reached.wait(timeout: .now() + 10) == .success }

    func release() { released.signal() }
}

/// Runs `body` on a thread of its own (not the cooperative pool, which a test blocked on a
/// `Gate` would starve) and lets the test wait for its result.
final class ThreadRun<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    init(_ body: @escaping @Sendable () throws -> T) {
        Thread.detachNewThread { [self] in
            result = Result { try body() }
            done.signal()
        }
    }

    /// The result, waiting up to 10 s for it.
    func value() throws -> T {
        guard done.wait(timeout: .now() + 10) == .success, let result else { throw ThreadRunTimeout() }
        return try result.get()
    }
}

struct ThreadRunTimeout: Error {}
