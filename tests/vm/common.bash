# Host side of the emulated-machine tests: boots the guest from tools/vm with
# the project's binaries, policies and guest scripts, runs one scenario
# (tests/vm/guest/NAME.sh, or a path), and keeps its /result in
# $BUILD/vm/NAME.result.  Sourced by tests/vm/*.sh and by `make demo`.
BUILD=${BUILD:-build}
vm_scenario() {
	local script=$1 name
	shift
	[ -f "$script" ] || script="tests/vm/guest/$script.sh"
	name=$(basename "$script" .sh)
	local adds=(
		--add "$BUILD/cxltierd" --add "$BUILD/cxltierctl" --add "$BUILD/tierbench"
		--add "$(command -v jq)"
		--add-dir "$BUILD/policies:/usr/lib/cxltier/policies"
		--add-dir "$BUILD/tests/policies:/usr/lib/cxltier/test-policies"
		--add-dir "tests/vm/guest:/tests"
	)
	mkdir -p "$BUILD/vm"
	tools/vm/run -q --timeout "${VM_TIMEOUT:-300}" "${adds[@]}" \
		--result "$BUILD/vm/$name.result" "$@" "$script"
}
