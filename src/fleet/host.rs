//! One machine of a fleet, as an inventory names it: the type every fleet part shares.

use serde::Serialize;

/// One host: its inventory name (what the user, the model and the audit log see) and how ssh
/// reaches it when the name alone does not (Ansible's `ansible_host`, `ansible_port`,
/// `ansible_user`). Everything else (keys, jump hosts, ciphers) is `~/.ssh/config`'s business.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Host {
    pub name: String,
    /// Where to connect when it is not the name (`ansible_host`).
    pub address: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    /// The inventory groups it belongs to, for display and selection.
    pub groups: Vec<String>,
}

impl Host {
    /// A host known only by its name.
    pub fn named(name: &str) -> Self {
        Self { name: name.to_owned(), address: None, port: None, user: None, groups: Vec::new() }
    }

    /// The ssh destination: the address when the inventory gives one, else the name.
    pub fn destination(&self) -> &str {
        self.address.as_deref().unwrap_or(&self.name)
    }

    /// ssh options beyond `~/.ssh/config`'s for this host: the inventory's port and user.
    pub fn ssh_options(&self) -> Vec<String> {
        let mut options = Vec::new();
        if let Some(port) = self.port {
            options.extend(["-p".to_owned(), port.to_string()]);
        }
        if let Some(user) = &self.user {
            options.extend(["-l".to_owned(), user.clone()]);
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inventory_address_port_and_user_reach_ssh() {
        let plain = Host::named("web-1");
        assert_eq!((plain.destination(), plain.ssh_options()), ("web-1", vec![]));
        let host = Host { address: Some("10.0.0.5".into()), port: Some(2222), user: Some("deploy".into()), ..plain };
        assert_eq!(host.destination(), "10.0.0.5");
        assert_eq!(host.ssh_options(), ["-p", "2222", "-l", "deploy"]);
    }
}
