import Foundation
import ImageCache

/// Real file-system operations, except those the test tells it to fail with a given errno.
final class FaultyFileSystem: CacheFileSystem, @unchecked Sendable {
    enum Operation: Hashable, Sendable { case write, read, rename, remove, append, list, mkdir }

    private let real = POSIXFileSystem()
    private let lock = NSLock()
    private var faults: [Operation: Int32] = [:]

    func fail(_ operation: Operation, with code: Int32) { lock.withLock { faults[operation] = code } }
    func heal() { lock.withLock { faults.removeAll() } }

    private func check(_ operation: Operation, _ path: String) throws(FileSystemError) {
        if let code = lock.withLock({ faults[operation] }) {
            throw FileSystemError(operation: "\(operation)", path: path, code: code)
        }
    }

    func createDirectory(at path: String) throws(FileSystemError) {
        try check(.mkdir, path)
        try real.createDirectory(at: path)
    }

    func readFile(at path: String) throws(FileSystemError) -> Data {
        try check(.read, path)
        return try real.readFile(at: path)
    }

    func writeFile(_ data: Data, to path: String, synchronize: Bool) throws(FileSystemError) {
        try check(.write, path)
        try real.writeFile(data, to: path, synchronize: synchronize)
    }

    func moveItem(from source: String, to destination: String) throws(FileSystemError) {
        try check(.rename, destination)
        try real.moveItem(from: source, to: destination)
    }

    func removeFile(at path: String) throws(FileSystemError) {
        try check(.remove, path)
        try real.removeFile(at: path)
    }

    func contentsOfDirectory(at path: String) throws(FileSystemError) -> [String] {
        try check(.list, path)
        return try real.contentsOfDirectory(at: path)
    }

    func fileSize(at path: String) throws(FileSystemError) -> Int? { try real.fileSize(at: path) }

    func openForAppending(_ path: String) throws(FileSystemError) -> any AppendingFile {
        FaultyAppendingFile(file: try real.openForAppending(path), owner: self)
    }

    func lockExclusively(_ path: String) throws(FileSystemError) -> any AnyObject & Sendable {
        try real.lockExclusively(path)
    }

    final class FaultyAppendingFile: AppendingFile, @unchecked Sendable {
        let file: any AppendingFile
        let owner: FaultyFileSystem
        init(file: any AppendingFile, owner: FaultyFileSystem) {
            self.file = file
            self.owner = owner
        }
        func append(_ data: Data) throws(FileSystemError) {
            try owner.check(.append, "journal")
            try file.append(data)
        }
    }
}
