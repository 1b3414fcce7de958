package seatbelt

// The permissions every command gets, whatever the settings: processes
// of its own sandbox, the Mach services, sysctls and devices common
// programs need (after Chrome's sandbox policy, as the reference's
// profile has them). The settings add to these, never remove.

var baseMachServices = []string{
	"com.apple.audio.systemsoundserver",
	"com.apple.distributed_notifications@Uv3",
	"com.apple.FontObjectsServer",
	"com.apple.fonts",
	"com.apple.logd",
	"com.apple.lsd.mapdb",
	"com.apple.PowerManagement.control",
	"com.apple.system.logger",
	"com.apple.system.notification_center",
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
	"com.apple.bsd.dirhelper",
	"com.apple.securityd.xpc",
	"com.apple.coreservices.launchservicesd",
}

var baseSysctls = []string{
	"hw.activecpu", "hw.busfrequency_compat", "hw.byteorder", "hw.cacheconfig",
	"hw.cachelinesize_compat", "hw.cpufamily", "hw.cpufrequency", "hw.cpufrequency_compat",
	"hw.cputype", "hw.l1dcachesize_compat", "hw.l1icachesize_compat", "hw.l2cachesize_compat",
	"hw.l3cachesize_compat", "hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize",
	"hw.ncpu", "hw.nperflevels", "hw.packages", "hw.pagesize_compat", "hw.pagesize",
	"hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency_compat", "hw.vectorunit",
	"kern.argmax", "kern.bootargs", "kern.hostname", "kern.maxfiles", "kern.maxfilesperproc",
	"kern.maxproc", "kern.ngroups", "kern.osproductversion", "kern.osrelease", "kern.ostype",
	"kern.osvariant_status", "kern.osversion", "kern.secure_kernel", "kern.tcsm_available",
	"kern.tcsm_enable", "kern.usrstack64", "kern.version", "kern.willshutdown",
	"machdep.cpu.brand_string", "machdep.ptrauth_enabled", "security.mac.lockdown_mode_state",
	"sysctl.proc_cputype", "vm.loadavg",
}

var baseSysctlPrefixes = []string{
	"hw.optional.arm", "hw.optional.arm.", "hw.optional.armv8_", "hw.perflevel",
	"kern.proc.all", "kern.proc.pgrp.", "kern.proc.pid.", "machdep.cpu.", "net.routetable.",
}

var ioctlDevices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/dtracehelper", "/dev/tty"}

// base writes the fixed part of the profile, after the default deny.
func (w *writer) base() {
	w.line("; Processes of this sandbox")
	w.line("(allow process-exec)")
	w.line("(allow process-fork)")
	w.line("(allow process-info* (target same-sandbox))")
	w.line("(allow signal (target same-sandbox))")
	w.line("(allow mach-priv-task-port (target same-sandbox))")
	w.line("(allow user-preference-read)")
	w.line("")
	w.line("; Mach services common programs need")
	w.line("(allow mach-lookup")
	for _, s := range baseMachServices {
		w.line("  (global-name %s)", w.str("mach service", s))
	}
	w.line(")")
	w.line("(allow mach-lookup (global-name \"com.apple.SecurityServer\"))")
	w.line("(allow ipc-posix-shm)")
	w.line("(allow ipc-posix-sem)")
	w.line("(allow iokit-open")
	w.line("  (iokit-registry-entry-class \"IOSurfaceRootUserClient\")")
	w.line("  (iokit-registry-entry-class \"RootDomainUserClient\")")
	w.line("  (iokit-user-client-class \"IOSurfaceSendRight\")")
	w.line(")")
	w.line("(allow iokit-get-properties)")
	w.line("(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))")
	w.line("(allow sysctl-read")
	for _, s := range baseSysctls {
		w.line("  (sysctl-name %s)", w.str("sysctl", s))
	}
	for _, s := range baseSysctlPrefixes {
		w.line("  (sysctl-name-prefix %s)", w.str("sysctl", s))
	}
	w.line(")")
	w.line("(allow sysctl-write (sysctl-name \"kern.tcsm_enable\"))")
	w.line("(allow distributed-notification-post)")
	w.line("")
	w.line("; Devices")
	for _, d := range ioctlDevices {
		w.line("(allow file-ioctl (literal %s))", w.str("device", d))
	}
	w.line("(allow file-ioctl file-read-data file-write-data (require-all (literal \"/dev/null\") (vnode-type CHARACTER-DEVICE)))")
}
