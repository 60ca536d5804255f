import PlainText
import RepSettings

#if canImport(Glibc)
    import Glibc
#endif

/// The files an uplink reads (the TLS CA, certificate and key, the password file), checked for what libmosquitto and
/// OpenSSL would refuse with fewer words: which key names the file, and what is wrong with it. `repd --check-config`
/// warns of them (the daemon would count without its uplink); each connection attempt checks again and logs it.
public enum UplinkFiles {
    /// One problem: the key that names the file, and why it cannot be used (the path first).
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The configuration key, as `uplink.ca_file`.
        public var key: String
        /// The path and what is wrong with it.
        public var reason: String
        /// "uplink.ca_file /etc/repd/ca.pem: No such file or directory".
        public var description: String { "\(key) \(reason)" }
    }

    /// The first problem with the files `settings` names; nil when each can be used. With `permissionsToo` false
    /// (a check run by another user than the daemon's), a file this process may not read is not a problem.
    public static func problem(_ settings: UplinkSettings, permissionsToo: Bool = true) -> Problem? {
        if let tls = settings.tls, let problem = problem(tls, permissionsToo: permissionsToo) { return problem }
        if let file = settings.passwordFile {
            switch PasswordFile.problem(file) {
            case .some(.unreadable(let code)) where code == EACCES && !permissionsToo: break
            case .some(let problem): return Problem(key: "uplink.password_file", reason: problem.reason(file))
            case nil: break
            }
        }
        return nil
    }

    /// The first problem with the TLS files; nil when each can be used.
    public static func problem(_ tls: UplinkSettings.TLS, permissionsToo: Bool = true) -> Problem? {
        let files: [(String, String?, Bool)] = [
            ("uplink.ca_file", tls.caFile, false), ("uplink.ca_path", tls.caFile == nil ? tls.caPath : nil, true),
            ("uplink.cert_file", tls.certFile, false), ("uplink.key_file", tls.keyFile, false),
        ]
        for (key, path, folder) in files {
            guard let path, let reason = unusable(path, folder: folder, permissionsToo: permissionsToo) else {
                continue
            }
            return Problem(key: key, reason: "\(path): \(reason)")
        }
        if let key = tls.keyFile, isEncrypted(key) {
            return Problem(
                key: "uplink.key_file",
                reason:
                    "\(key) is protected by a pass phrase, which repd has no way to enter: store the key without one, readable only by repd (openssl pkey -in \(key) -out KEY; chmod 640 KEY; chgrp repd KEY)"
            )
        }
        return nil
    }

    /// Why `path` cannot be read as a file (or, `folder`, listed as a folder); nil when it can.
    static func unusable(_ path: String, folder: Bool, permissionsToo: Bool) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return String(cString: strerror(errno)) }
        let isFolder = info.st_mode & S_IFMT == S_IFDIR
        if folder, !isFolder { return "not a folder (uplink.ca_path names a folder of CA certificates)" }
        if !folder, isFolder { return "a folder, not a file" }
        guard permissionsToo, access(path, R_OK) != 0 else { return nil }
        return String(cString: strerror(errno))
    }

    /// Whether the PEM file at `path` holds an encrypted private key (false when it cannot be read).
    static func isEncrypted(_ path: String) -> Bool {
        guard let bytes = try? TextFile.readBytes(path, limit: 1 << 20) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
    }
}
