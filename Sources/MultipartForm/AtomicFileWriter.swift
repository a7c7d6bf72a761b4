#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Writes a file under a temporary name beside its destination and renames it into place, so
/// a reader (or a crash) never sees a half-written body. On failure nothing is left behind.
enum AtomicFileWriter {
    /// Calls `produce` with a sink that appends to the file; errors name `url`, not the
    /// temporary file, which means nothing to the caller.
    static func create(
        at url: URL, _ produce: (_ sink: (Data) throws(MultipartFormDataError) -> Void) throws(MultipartFormDataError) -> Void
    ) throws(MultipartFormDataError) {
        let path = url.path
        let temporary = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let file = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw .io(path: path, errno: errno) }
        var isOpen = true
        do throws(MultipartFormDataError) {
            try produce { (chunk) throws(MultipartFormDataError) in try writeAll(chunk, to: file, path: path) }
            isOpen = false
            if close(file) != 0 { throw MultipartFormDataError.io(path: path, errno: errno) }
            if rename(temporary, path) != 0 { throw MultipartFormDataError.io(path: path, errno: errno) }
        } catch {
            // Closed once only: a second close could hit a descriptor another thread just opened.
            if isOpen { close(file) }
            unlink(temporary)
            throw error
        }
    }

    private static func writeAll(_ data: Data, to file: Int32, path: String) throws(MultipartFormDataError) {
        let failure: Int32? = data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < buffer.count {
                let count = write(file, base + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += count
            }
            return nil
        }
        if let failure { throw .io(path: path, errno: failure) }
    }
}
