import Foundation

/// Whole-file reads and atomic writes with `ImageCodecError.io` errors that name the file and
/// the operating system's reason ("No such file or directory"), not a wrapped Foundation error.
public enum FileBytes {
    /// Reads into memory rather than mapping: a mapped file truncated by another process
    /// would kill this one with SIGBUS.
    public static func read(_ url: URL) throws(ImageCodecError) -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw .io(path: url.path, reason: reason(error))
        }
    }

    /// Writes to a temporary file beside `url` and renames it into place, so readers (and a
    /// crash) never see a half-written file.
    public static func writeAtomically(_ data: Data, to url: URL) throws(ImageCodecError) {
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw .io(path: url.path, reason: reason(error))
        }
    }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileReadNoSuchFile, .fileNoSuchFile: return String(cString: strerror(ENOENT))
        case .fileReadNoPermission, .fileWriteNoPermission: return String(cString: strerror(EACCES))
        default: return nsError.localizedDescription
        }
    }
}
