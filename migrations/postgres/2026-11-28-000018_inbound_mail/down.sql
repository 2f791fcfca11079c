DROP TABLE inbound_mail;
